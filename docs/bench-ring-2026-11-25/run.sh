# The one device call (H100), from the checkout root with carry [".device-ring"] (prepare.sh filled it):
# the checked bundles against the interpreter, then every kernel base/rem/roll/roll/rem/base in one runner process.
cd .device-ring && chmod +x tilec-gpu-runner && nvidia-smi -L > "$OUT/check.log" && ./tilec-gpu-runner check/* >> "$OUT/check.log" 2>&1
args=(); for b in bench/*-base; do p="${b%-base}"; args+=("$b" "$p-rem" "$p-roll" "$p-roll" "$p-rem" "$b"); done
./tilec-gpu-runner bench "${args[@]}" --json "$OUT/bench.jsonl" > "$OUT/bench.log" 2>&1
