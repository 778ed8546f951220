set -e
D=/work/main/.device-persist
T=./target/release/tilec
rm -rf $D/bundles $D/bundles-mlir $D/bench
mkdir -p $D/bundles $D/bundles-mlir $D/bench
cp target/release/tilec-gpu-runner $D/
for backend in llvm mlir; do
  out=$D/bundles; [ $backend = llvm ] || out=$D/bundles-mlir
  for shape in 300,200,136 261,133,67 261,136,72 400,520,200 640,1000,264; do
    $T bundle examples/gemm_hopper.tir --target sm_90a --backend $backend --shape $shape --param persistent=true -o $out/hopper_p_${shape//,/x} > /dev/null
  done
  for shape in 261,136,72 300,520,200; do
    $T bundle examples/gemm_bf16_hopper.tir --target sm_90a --backend $backend --shape $shape --param persistent=true -o $out/hopper_bf16_p_${shape//,/x} > /dev/null
  done
  $T bundle examples/gemm_hopper.tir --target sm_90a --backend $backend --shape 400,520,200 --param persistent=true --param raster_group=2 -o $out/hopper_p_rg2_400x520x200 > /dev/null
done
S="--shape 4096,4096,4096 --shape 8192,8192,8192 --shape 8192,8192,1000 --target sm_90a"
$T bench examples/gemm_hopper.tir $S --bundle $D/bench/a_base > /dev/null
$T bench examples/gemm_hopper.tir $S --param persistent=true --bundle $D/bench/b_persist > /dev/null
$T bench examples/gemm_hopper.tir $S --param persistent=true --param raster_group=8 --bundle $D/bench/c_persist_rg8 > /dev/null
$T bench examples/gemm_hopper.tir $S --param raster_group=8 --bundle $D/bench/d_base_rg8 > /dev/null
$T bench examples/gemm_hopper.tir $S --param persistent=true --backend mlir --bundle $D/bench/e_persist_mlir > /dev/null
du -sh $D
