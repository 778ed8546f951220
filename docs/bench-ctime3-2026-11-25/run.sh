# The one device call (H100), from the checkout root with carry [".device-ctime3"] (prepare.sh filled it):
# the checked bundles against the interpreter, then every bench pair in one runner process, each kernel
# before/after/after/before.
cd .device-ctime3 && chmod +x tilec-gpu-runner && nvidia-smi -L > "$OUT/check.log"
./tilec-gpu-runner check/* >> "$OUT/check.log" 2>&1
args=(); for b in bench/*-before; do a="${b%-before}-after"; args+=("$b" "$a" "$a" "$b"); done
./tilec-gpu-runner bench "${args[@]}" --json "$OUT/bench.jsonl" > "$OUT/bench.log" 2>&1
