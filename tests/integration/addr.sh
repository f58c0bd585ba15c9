# Software address sampling (issue 3): record addr_mix under cpu-clock
# sampling, read the kept addresses back from the profile (`report
# --addresses`), and check them against the arrays the workload reports.
# Sourced by tests/run-integration.sh.

# addr_share TSV TRUTH KIND: "samples inside tid_ok instance_ok" over the
# kept records whose (skid-corrected) IP is in KIND_loop: how many fall in
# KIND's array, come from KIND's thread, and carry a section instance.
addr_share() {
	local tsv=$1 truth=$2 kind=$3 tid lo hi n=0 in=0 tok=0 iok=0 x
	local ts t ip addr size acc skid inst fn loc
	read -r _ tid lo hi < <(grep "^$kind " "$truth")
	[ -n "$hi" ] || { echo "0 0 0 0"; return; }
	lo=$((lo))
	hi=$((hi))
	while IFS=$'\t' read -r ts t ip addr size acc skid inst fn loc; do
		[ "$fn" = "${kind}_loop" ] || continue
		n=$((n + 1))
		x=$((addr))
		if ((x >= lo && x < hi)); then in=$((in + 1)); fi
		[ "$t" = "$tid" ] && tok=$((tok + 1))
		[ "$inst" -ge 0 ] && iok=$((iok + 1))
	done <"$tsv"
	echo "$n $in $tok $iok"
}

addr_group() {
	local j=$TMP/addr.json tsv=$TMP/addr.tsv truth=$TMP/addr.truth kind n in tok iok und
	rm -f "$truth"
	if ! SB_ADDR_TRUTH=$truth record_json "$j" -- "$WL/addr_mix" 5 300; then
		bad "addresses: record addr_mix"
		return
	fi
	check "addresses: report --addresses reads the kept records" \
		bash -c "'$SB' report -i '$TMP/addr.sbp' --addresses >'$tsv'"
	und=$(jq '.addresses.undecodable' "$j")
	for kind in chase stream; do
		read -r n in tok iok < <(addr_share "$tsv" "$truth" $kind)
		echo "     $kind loop: $n memory samples, $in in its array, $tok from its thread, $iok with an instance"
		# >= 20 samples: the loops run ~1 s each at 199 Hz, far more.
		check "addresses: $kind loop sampled ($n >= 20)" test "$n" -ge 20
		# The denominator counts every undecodable sample of the run as
		# if it were this loop's: the share is of memory samples, not of
		# decoded ones only.
		check "addresses: $kind loop: >= 80% of its memory samples in the $kind array ($in of $n + $und undecodable)" \
			test $((in * 100)) -ge $(((n + und) * 80))
		check "addresses: $kind loop: every record from the $kind thread" test "$tok" -eq "$n"
		check "addresses: $kind loop: every record in a section instance" test "$iok" -eq "$n"
	done
	jqcheck "addresses: json counts add up, undecodable share reported" "$j" '.addresses as $a | $a.samples == $a.decoded + $a.undecodable + $a.no_memory_access + $a.no_code and $a.memory_samples == $a.decoded + $a.undecodable and ($a.undecodable_pct | type) == "number" and $a.decoded > 0 and .meta.addr_undecodable == ($a.undecodable | tostring)'
	jqcheck "addresses: kept = records in the profile, within capacity" "$j" \
		".addresses.kept == $(grep -vc '^#' "$tsv") and .addresses.kept <= .addresses.capacity and .addresses.kept == .addresses.decoded"
	check "addresses: the text report shows the undecodable share" \
		bash -c "'$SB' report -i '$TMP/addr.sbp' | grep -Eq '^  addresses: [0-9]+ of [0-9]+ samples were memory accesses: .* undecodable \\([0-9.]+%\\)'"
	echo "     $(jq -r '"decode cost: \(.meta.addr_decode_ns_per_sample) ns per sample, \(.meta.addr_decode_ns_per_repeat) ns per repeated IP; undecodable \(.addresses.undecodable_pct)%"' "$j")"
}
timed_group "addresses" addr_group

# A chase whose only load overwrites its own address register (p =
# p->next): samples after it are undecodable and must be counted so, not
# guessed; the few at the loop head (the load not yet run) still decode.
addr_clobber_group() {
	local j=$TMP/addrn.json tsv=$TMP/addrn.tsv truth=$TMP/addrn.truth n in tok iok und
	rm -f "$truth"
	if ! SB_ADDR_TRUTH=$truth record_json "$j" -- "$WL/addr_mix" 1 1 5; then
		bad "addresses: record addr_mix with a self-clobbering chase"
		return
	fi
	"$SB" report -i "$TMP/addrn.sbp" --addresses >"$tsv"
	read -r n in tok iok < <(addr_share "$tsv" "$truth" next)
	und=$(jq '.addresses.undecodable' "$j")
	echo "     next loop: $n decoded ($in in its array), $und undecodable in the run ($(jq '.addresses.undecodable_pct' "$j")%)"
	check "addresses: self-clobbering chase: >= 50 undecodable samples counted ($und)" test "$und" -ge 50
	check "addresses: self-clobbering chase: undecodable >= 3x its decoded loop-head samples ($und vs $n)" \
		test "$und" -ge $((3 * n))
	check "addresses: self-clobbering chase: what decodes is in its array ($in of $n)" test "$in" -eq "$n"
}
timed_group "addresses: self-clobbering chase" addr_clobber_group
