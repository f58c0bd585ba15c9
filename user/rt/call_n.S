/* SPDX-License-Identifier: MIT */
/*
 * void sbx_call_n(void *fn, long n, const unsigned long *args)
 *
 * Calls fn(args[0], ..., args[n-1]), every argument an integer or pointer,
 * as a variadic call (al = 0).  C cannot forward a variable number of
 * arguments, and libomp's fork call and outlined functions take one per
 * shared variable.  args must hold at least 6 entries (pad with zeros).
 * x86-64 SysV: six in registers, the rest on the stack, 16-byte aligned at
 * the call; rbp keeps the frame chain for stack walks.
 */
	.text
	.globl	sbx_call_n
	.hidden	sbx_call_n
	.type	sbx_call_n, @function
sbx_call_n:
	push	%rbp
	mov	%rsp, %rbp
	push	%rbx
	push	%r12
	mov	%rdi, %r11		/* fn */
	mov	%rsi, %rbx		/* n */
	mov	%rdx, %r12		/* args */
	mov	%rbx, %rcx
	sub	$6, %rcx
	jle	2f
	test	$1, %rcx
	jz	1f
	sub	$8, %rsp		/* an odd number of pushes follows */
1:	mov	%rbx, %rcx
3:	dec	%rcx
	push	(%r12,%rcx,8)
	cmp	$6, %rcx
	jg	3b
2:	mov	0(%r12), %rdi
	mov	8(%r12), %rsi
	mov	16(%r12), %rdx
	mov	24(%r12), %rcx
	mov	32(%r12), %r8
	mov	40(%r12), %r9
	xor	%eax, %eax
	call	*%r11
	lea	-16(%rbp), %rsp
	pop	%r12
	pop	%rbx
	pop	%rbp
	ret
	.size	sbx_call_n, .-sbx_call_n
	.section	.note.GNU-stack,"",@progbits
