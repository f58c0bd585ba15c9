# tables.awk — the accuracy suite's tables from results.tsv (run.sh).
# Columns: see the header line of results.tsv.
BEGIN { FS = "\t" }
NR == 1 { for (i = 1; i <= NF; i++) C[$i] = i; next }
{
	m = $C["mode"]; rows++
	R[rows] = $0
	n[m]++; pr[m] += $C["present"]; t1[m] += $C["top1"]; t3[m] += $C["top3"]
	w[m] += $C["wrong"]; lo[m] += $C["lowev"]
	if ($C["unsettled"]) { un[m]++; unr[m] += $C["top1"] }
	if (m == "sampled" && $C["samples"] >= 2000) {
		bn++; bt1 += $C["top1"]; bt3 += $C["top3"]; bw += $C["wrong"]
	}
	if (m == "exact" && $C["cause"] == "cache") {
		cn++; ck += ($C["kind1"] == "hardware"); ch += $C["hardware"]
	}
	thr = $C["threads"] + 0
	tb = thr <= 2 ? "<=2" : thr <= 8 ? "3-8" : thr <= 16 ? "9-16" : "17-32"
	s = $C["secs"] + 0
	sb = s < 2 ? "1-2s" : s < 5 ? "2-5s" : s < 10 ? "5-10s" : "10-30s"
	split("cause place rt cc opt pie sched launch threads secs hz", vars, " ")
	for (v = 1; v in vars; v++) {
		val = vars[v] == "threads" ? tb : vars[v] == "secs" ? sb : $C[vars[v]]
		k = vars[v] SUBSEP val SUBSEP m
		vn[k]++; v1[k] += $C["top1"]; v3[k] += $C["top3"]; vp[k] += $C["present"]
		seen[vars[v] SUBSEP val] = 1
	}
}
function p(a, b) { return b ? sprintf("%5.1f%%", 100 * a / b) : "    - " }
END {
	printf "\n== accuracy, seed %s: %d recordings\n", seed, rows
	printf "%-8s %4s %8s %7s %7s %9s %7s\n", "mode", "n", "section", "top-1", "top-3", "conf.wrong", "low-ev"
	for (m in n)
		printf "%-8s %4d %8s %7s %7s %9s %7s\n", m, n[m], p(pr[m], n[m]), p(t1[m], n[m]), p(t3[m], n[m]), p(w[m], n[m]), p(lo[m], n[m])
	printf "sampled, >= 2000 samples in the planted section: n=%d top-1 %s top-3 %s confidently wrong %s\n", bn, p(bt1, bn), p(bt3, bn), p(bw, bn)
	for (m in n)
		if (un[m])
			printf "%s: top cause not settled by the samples (alternatives listed): %d, of which right %d\n", m, un[m], unr[m]
	printf "exact, cache-behaviour programs: n=%d top cause kind hardware %s (at the planted line %s)\n", cn, p(ck, cn), p(ch, cn)
	printf "\n== per variable (top-1 / top-3 / section found, n)\n"
	printf "%-22s %-24s %-24s\n", "variable=value", "exact", "sampled"
	split("cause place rt cc opt pie sched launch threads secs hz", vars, " ")
	for (v = 1; v in vars; v++) {
		cnt = 0
		for (sk in seen) {
			split(sk, a, SUBSEP)
			if (a[1] != vars[v]) continue
			line = sprintf("%-22s", a[1] "=" a[2])
			for (mi = 1; mi <= 2; mi++) {
				m = mi == 1 ? "exact" : "sampled"
				k = a[1] SUBSEP a[2] SUBSEP m
				line = line sprintf(" %s/%s/%s n=%-3d", p(v1[k], vn[k]), p(v3[k], vn[k]), p(vp[k], vn[k]), vn[k])
			}
			L[++cnt] = line
		}
		# sorted by value for a stable print
		for (i = 2; i <= cnt; i++) for (j = i; j > 1 && L[j - 1] > L[j]; j--) { t = L[j]; L[j] = L[j - 1]; L[j - 1] = t }
		for (i = 1; i <= cnt; i++) print L[i]
	}
	printf "\n== misses (top cause not at the planted line): what was reported instead\n"
	for (r = 1; r <= rows; r++) {
		split(R[r], f, FS)
		if (f[C["top1"]] == 1) continue
		printf "%s %-7s cause=%s place=%s rt=%s cc=%s %s %s sched=%s launch=%s threads=%s secs=%s hz=%s | section:%s imb=%s%% samples=%s verdict=%s%s\n    reported: %s\n",
			f[C["name"]], f[C["mode"]], f[C["cause"]], f[C["place"]], f[C["rt"]], f[C["cc"]], f[C["opt"]], f[C["pie"]],
			f[C["sched"]], f[C["launch"]], f[C["threads"]], f[C["secs"]], f[C["hz"]],
			f[C["present"]] == 1 ? "found" : "MISSING", f[C["section_imb"]], f[C["samples"]], f[C["verdict"]],
			f[C["wrong"]] == 1 ? " CONFIDENTLY WRONG" : f[C["top3"]] == 1 ? " (top-3)" : "", f[C["reported"]]
	}
}
