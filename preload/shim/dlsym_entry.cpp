// The exported dlsym and dlvsym. glibc answers dlsym(RTLD_NEXT, name) relative to the object
// that called it, which it finds from its own return address, and 2.36 exports no _dl_sym that
// takes the caller as an argument. So these entries are assembly: they save the arguments, ask
// hangshim_dlsym_route (dlsym_route.cpp) whether to hand out one of our wrappers, and
// otherwise restore the arguments and *jump* into libc's function, which then sees the
// program's return address, not ours: its answer is exactly the one it gives without the shim.
// x86-64 only; elsewhere libhangshim.so exports no dlsym (the names in libhangshim.map are
// ignored by the linker) and callers with their own handle stay unrecorded (docs/troubleshooting.md). Not in
// sanitizer builds either (HANGSHIM_NO_DLSYM_INTERPOSER): the sanitizer runtimes resolve their
// interceptors with dlsym(RTLD_NEXT) before their shadow memory exists, and the router is
// instrumented code.
#if defined(__x86_64__) && defined(__linux__) && !defined(HANGSHIM_NO_DLSYM_INTERPOSER)

// Entry: %rsp is 8 mod 16. dlsym saves two registers and pads 8 bytes, dlvsym saves three, so
// the call to the router has the 16-byte alignment the ABI requires. The router returns the
// wrapper in %rax or 0; the argument registers are restored before the jump. If libc's
// function is unknown (not glibc), the answer is 0 (the router warned once).
asm(R"(
    .text
    .globl dlsym
    .type dlsym, @function
    .p2align 4
dlsym:
    .cfi_startproc
    endbr64
    pushq %rdi
    .cfi_adjust_cfa_offset 8
    pushq %rsi
    .cfi_adjust_cfa_offset 8
    subq $8, %rsp
    .cfi_adjust_cfa_offset 8
    xorl %edx, %edx
    call hangshim_dlsym_route
    addq $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq %rsi
    .cfi_adjust_cfa_offset -8
    popq %rdi
    .cfi_adjust_cfa_offset -8
    testq %rax, %rax
    jnz 1f
    movq hangshim_libc_dlsym(%rip), %rax
    testq %rax, %rax
    jz 1f
    jmp *%rax
1:
    ret
    .cfi_endproc
    .size dlsym, .-dlsym

    .globl dlvsym
    .type dlvsym, @function
    .p2align 4
dlvsym:
    .cfi_startproc
    endbr64
    pushq %rdi
    .cfi_adjust_cfa_offset 8
    pushq %rsi
    .cfi_adjust_cfa_offset 8
    pushq %rdx
    .cfi_adjust_cfa_offset 8
    call hangshim_dlsym_route
    popq %rdx
    .cfi_adjust_cfa_offset -8
    popq %rsi
    .cfi_adjust_cfa_offset -8
    popq %rdi
    .cfi_adjust_cfa_offset -8
    testq %rax, %rax
    jnz 1f
    movq hangshim_libc_dlvsym(%rip), %rax
    testq %rax, %rax
    jz 1f
    jmp *%rax
1:
    ret
    .cfi_endproc
    .size dlvsym, .-dlvsym
)");

#endif
