# Sourced inside the chroot by tools/sbf/build.
export CARGO_HOME=/build/cargo-home
export PATH=/build/tools/bin:/usr/lib/llvm-23/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# llvm-sys (bpf-linker) finds LLVM 23 through these.
export LLVM_PREFIX=/usr/lib/llvm-23
export LLVM_SYS_231_PREFIX=/usr/lib/llvm-23
export LLVM_SYS_230_PREFIX=/usr/lib/llvm-23
export LLVM_CONFIG_PATH=/usr/lib/llvm-23/bin/llvm-config
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-2}
export CARGO_TERM_COLOR=never
