; SC4 (docs/consumers.md "The llvm-spirv -> llc chain"): what the chain's retarget
; leaves for amdgcn, reduced: an alloca in address space 0 (amdgcn's data layout
; says 5) whose pointer escapes into a call. llc-15 -O0 -filetype=obj
; -mcpu=gfx900 dies with SIGSEGV in TargetLowering::LowerCallTo.
target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7"
target triple = "amdgcn-amd-amdhsa"
declare void @g(i64*)
define void @k() {
  %a = alloca i64, align 8
  call void @g(i64* %a)
  ret void
}
