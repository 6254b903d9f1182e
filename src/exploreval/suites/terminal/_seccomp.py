"""A seccomp filter for the verification sandbox: no process may reach into another's memory.

Everything the test command runs shares one uid, and the kernel lets a process of a uid trace
or read another of the same uid. A program the test script starts (the agent's server, say)
could otherwise attach to the shell running the script, or to pytest, and change what they do.
The filter makes ``ptrace``, ``process_vm_readv``/``process_vm_writev`` and ``pidfd_getfd`` fail
with ``EPERM`` (``/proc`` is read-only in the same sandbox, so ``/proc/<pid>/mem`` cannot be
written either). The results plugin also marks pytest's process non-dumpable.

The program is classic BPF, built here (no libseccomp): check the architecture, load the system
call number, compare, return. Other architectures than x86-64 and aarch64 get no filter (bwrap
is told nothing), and the docs say so.
"""

from __future__ import annotations

import os
import platform
import struct

_BPF_LD_W_ABS = 0x20
_BPF_JEQ_K = 0x15
_BPF_JGE_K = 0x35
_BPF_RET_K = 0x06
_SECCOMP_RET_ALLOW = 0x7FFF0000
_SECCOMP_RET_ERRNO = 0x00050000
_EPERM = 1
#: Per machine: (audit architecture, blocked call numbers) for its native ABI and the 32-bit ABI
#: it also runs (i386 on x86-64, arm on aarch64). The names: ptrace, process_vm_readv,
#: process_vm_writev, pidfd_getfd.
BLOCKED = ("ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd")
_ARCHES: dict[str, list[tuple[int, tuple[int, ...]]]] = {
    "x86_64": [(0xC000003E, (101, 310, 311, 438)), (0x40000003, (26, 347, 348, 438))],
    "aarch64": [(0xC00000B7, (117, 270, 271, 438)), (0x40000028, (26, 376, 377, 438))],
}
_X32_BIT = 0x40000000


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def filter_program(machine: str | None = None) -> bytes | None:
    """The compiled filter for ``machine`` (default: this one), or None if unsupported.

    Layout: load the architecture; for each known ABI, if it matches, load the call number and
    deny the blocked ones (on x86-64 every x32 call too); an unknown ABI is denied outright."""
    abis = _ARCHES.get(machine or platform.machine())
    if abis is None:
        return None
    deny = _insn(_BPF_RET_K, 0, 0, _SECCOMP_RET_ERRNO | _EPERM)
    allow = _insn(_BPF_RET_K, 0, 0, _SECCOMP_RET_ALLOW)
    blocks: list[list[bytes]] = []
    for arch, numbers in abis:
        checks = []
        if arch == 0xC000003E:
            checks.append(("jge", _X32_BIT))
        checks += [("jeq", n) for n in numbers]
        block = [_insn(_BPF_LD_W_ABS, 0, 0, 0)]  # seccomp_data.nr
        for i, (op, value) in enumerate(checks):
            to_deny = len(checks) - i  # skip the remaining checks and the allow
            block.append(_insn(_BPF_JGE_K if op == "jge" else _BPF_JEQ_K, to_deny, 0, value))
        block += [allow, deny]
        blocks.append(block)
    program = [_insn(_BPF_LD_W_ABS, 0, 0, 4)]  # seccomp_data.arch
    for (arch, _numbers), block in zip(abis, blocks, strict=True):
        # matches: fall through into its block; else jump over it to the next test
        program.append(_insn(_BPF_JEQ_K, 0, len(block), arch))
        program += block
    program.append(deny)  # an ABI nobody expects here
    return b"".join(program)


def filter_fd() -> int | None:
    """A readable pipe holding the program, for ``bwrap --seccomp FD`` (the caller closes it)."""
    program = filter_program()
    if program is None:
        return None
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, program)
    finally:
        os.close(write_end)
    return read_end
