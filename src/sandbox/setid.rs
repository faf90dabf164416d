//! The seccomp layer: an engine makes no set-user-ID or set-group-ID file.
//!
//! An engine may own files (in its `write=` folders, and where it may write at all): it
//! could give one the set-user-ID bit, and whoever runs that file later runs it as the
//! engine's user, root when the referee runs as root (an engine's uid 0 in its user
//! namespace is the machine's root). Owning a file is enough to set the bit, so neither
//! the mounts nor Landlock nor the dropped capabilities stop it; this filter does.
//!
//! A classic BPF program, installed just before the engine's program is exec'd (after
//! `no_new_privs`) and inherited by everything the engine starts, refuses with `EPERM`:
//! - `chmod`, `fchmod`, `fchmodat` and `fchmodat2` whose mode has `S_ISUID` or `S_ISGID`
//!   (a folder's `g+s` too);
//! - `open`, `openat` and `creat` that create a file (`O_CREAT` or `O_TMPFILE`), and
//!   `mknod` and `mknodat`, whose mode has them;
//!
//! and with `ENOSYS`, as a kernel without them would, so that libraries fall back:
//! - `openat2`, whose mode is behind a pointer the filter cannot read;
//! - `io_uring_setup`: requests of an io_uring (an open among them) are not system calls
//!   and never pass the filter.
//!
//! The program checks the calling convention first (`seccomp_data.arch`): on x86_64 the
//! i386 one (`int 0x80`, 32-bit programs) has a table of its own, and every call of the
//! x32 one (numbers with bit 30 set) is refused (`ENOSYS`); any other convention ends the
//! process. Only the modes are read, never a path: what the filter allows, the kernel
//! decides as before.

use libc::sock_filter;

/// `seccomp_data.arch` of the calling conventions (linux/audit.h).
const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
const AUDIT_ARCH_I386: u32 = 0x4000_0003;
const AUDIT_ARCH_AARCH64: u32 = 0xc000_00b7;
/// The bit of an x32 system call's number on x86_64.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// The mode bits refused.
const SET_ID: u32 = 0o6000;
/// The open flags that create a file, so that its mode is used: `O_CREAT` and the bit
/// of `O_TMPFILE` (the same on x86 and arm64; `O_TMPFILE` is it with `O_DIRECTORY`).
const CREATES: u32 = 0o100 | 0o20_000_000;

/// Actions (linux/seccomp.h).
const RET_KILL_PROCESS: u32 = 0x8000_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const RET_ALLOW: u32 = 0x7fff_0000;

/// Instructions (linux/bpf_common.h): load a word at a fixed offset, the three jumps
/// against a constant, return a constant.
const LD_W_ABS: u16 = 0x20; // BPF_LD (0) | BPF_W (0) | BPF_ABS
const JEQ_K: u16 = 0x05 | 0x10; // BPF_JMP | BPF_JEQ | BPF_K (0)
const JGE_K: u16 = 0x05 | 0x30; // BPF_JMP | BPF_JGE | BPF_K
const JSET_K: u16 = 0x05 | 0x40; // BPF_JMP | BPF_JSET | BPF_K
const RET_K: u16 = 0x06; // BPF_RET | BPF_K

/// Offsets in `struct seccomp_data`: the call's number, its convention, its arguments
/// (each 64 bits; the low half is read: modes and flags are 32-bit).
const NR: u32 = 0;
const ARCH: u32 = 4;
fn arg(i: u32) -> u32 {
    16 + 8 * i + if cfg!(target_endian = "big") { 4 } else { 0 }
}

/// A system call the filter looks at.
#[derive(Clone, Copy, Debug)]
enum Call {
    /// Refused when argument `mode` has a set-id bit.
    Mode { nr: u32, mode: u32 },
    /// Refused when argument `flags` creates a file and argument `mode` has a set-id bit.
    Open { nr: u32, flags: u32, mode: u32 },
    /// Always refused, with `ENOSYS`.
    Absent { nr: u32 },
}

/// One calling convention: its `seccomp_data.arch`, its calls, whether it is x86_64's
/// (where x32 calls come with the same `arch`).
struct Convention {
    arch: u32,
    calls: &'static [Call],
    x32: bool,
}

use Call::{Absent, Mode, Open};

const fn mode(nr: u32, mode: u32) -> Call {
    Mode { nr, mode }
}
const fn open(nr: u32, flags: u32, mode: u32) -> Call {
    Open { nr, flags, mode }
}
const fn absent(nr: u32) -> Call {
    Absent { nr }
}

/// x86_64 (arch/x86/entry/syscalls/syscall_64.tbl): the number, then the arguments.
const X86_64: &[Call] = &[
    open(2, 1, 2),   // open(path, flags, mode)
    mode(85, 1),     // creat(path, mode)
    mode(90, 1),     // chmod(path, mode)
    mode(91, 1),     // fchmod(fd, mode)
    mode(133, 1),    // mknod(path, mode, dev)
    open(257, 2, 3), // openat(dir, path, flags, mode)
    mode(259, 2),    // mknodat(dir, path, mode, dev)
    mode(268, 2),    // fchmodat(dir, path, mode)
    absent(425),     // io_uring_setup
    absent(437),     // openat2
    mode(452, 2),    // fchmodat2(dir, path, mode, flags)
];

/// i386 (arch/x86/entry/syscalls/syscall_32.tbl).
const I386: &[Call] = &[
    open(5, 1, 2),   // open
    mode(8, 1),      // creat
    mode(14, 1),     // mknod
    mode(15, 1),     // chmod
    mode(94, 1),     // fchmod
    open(295, 2, 3), // openat
    mode(297, 2),    // mknodat
    mode(306, 2),    // fchmodat
    absent(425),     // io_uring_setup
    absent(437),     // openat2
    mode(452, 2),    // fchmodat2
];

/// arm64 (include/uapi/asm-generic/unistd.h): only the `*at` calls exist.
const AARCH64: &[Call] = &[
    mode(33, 2),    // mknodat
    mode(52, 1),    // fchmod
    mode(53, 2),    // fchmodat
    open(56, 2, 3), // openat
    absent(425),    // io_uring_setup
    absent(437),    // openat2
    mode(452, 2),   // fchmodat2
];

const CONV_X86_64: Convention = Convention {
    arch: AUDIT_ARCH_X86_64,
    calls: X86_64,
    x32: true,
};
const CONV_I386: Convention = Convention {
    arch: AUDIT_ARCH_I386,
    calls: I386,
    x32: false,
};
const CONV_AARCH64: Convention = Convention {
    arch: AUDIT_ARCH_AARCH64,
    calls: AARCH64,
    x32: false,
};

/// The conventions of this machine's processes, `None` where no table is kept.
fn native() -> Option<&'static [Convention]> {
    if cfg!(target_arch = "x86_64") {
        Some(&[CONV_X86_64, CONV_I386])
    } else if cfg!(target_arch = "aarch64") {
        Some(&[CONV_AARCH64])
    } else {
        None
    }
}

/// The filter for this machine, `None` where it has none.
pub(crate) fn filter() -> Option<Vec<sock_filter>> {
    native().map(program)
}

/// Installs the filter on this process and everything it execs or starts; needs
/// `no_new_privs`.
pub(crate) fn refuse() -> std::io::Result<()> {
    let program = filter().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "no filter is kept for this machine's architecture",
        )
    })?;
    crate::sys::sandbox::install_seccomp_filter(&program)
}

fn stmt(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: usize, jf: usize) -> sock_filter {
    let off = |n: usize| u8::try_from(n).expect("a jump of the filter fits in 255");
    sock_filter {
        code,
        jt: off(jt),
        jf: off(jf),
        k,
    }
}

fn errno(e: i32) -> u32 {
    RET_ERRNO | (e as u32 & 0xffff)
}

/// The instructions for one call, entered with the call's number loaded: they end in a
/// return, or fall through to the next call's (the number still loaded) when the number
/// is not this one's.
fn call_block(call: Call) -> Vec<sock_filter> {
    let refuse_if_set_id = |mode: u32| {
        [
            stmt(LD_W_ABS, arg(mode)),
            jump(JSET_K, SET_ID, 0, 1),
            stmt(RET_K, errno(libc::EPERM)),
            stmt(RET_K, RET_ALLOW),
        ]
    };
    let body: Vec<sock_filter> = match call {
        Mode { mode, .. } => refuse_if_set_id(mode).to_vec(),
        Open { flags, mode, .. } => {
            let mut b = vec![
                stmt(LD_W_ABS, arg(flags)),
                // Not creating: the mode is not used; allowed (the last instruction).
                jump(JSET_K, CREATES, 0, 3),
            ];
            b.extend(refuse_if_set_id(mode));
            b
        }
        Absent { .. } => vec![stmt(RET_K, errno(libc::ENOSYS))],
    };
    let nr = match call {
        Mode { nr, .. } | Open { nr, .. } | Absent { nr } => nr,
    };
    let mut block = vec![jump(JEQ_K, nr, 0, body.len())];
    block.extend(body);
    block
}

/// The instructions for one convention, ending in a return.
fn convention_block(c: &Convention) -> Vec<sock_filter> {
    let mut block = vec![stmt(LD_W_ABS, NR)];
    if c.x32 {
        block.push(jump(JGE_K, X32_SYSCALL_BIT, 0, 1));
        block.push(stmt(RET_K, errno(libc::ENOSYS)));
    }
    for &call in c.calls {
        block.extend(call_block(call));
    }
    block.push(stmt(RET_K, RET_ALLOW));
    block
}

/// The whole program: a jump to the block of the caller's convention, or the end of the
/// process when it has none here.
fn program(conventions: &[Convention]) -> Vec<sock_filter> {
    let blocks: Vec<Vec<sock_filter>> = conventions.iter().map(convention_block).collect();
    let mut prog = vec![stmt(LD_W_ABS, ARCH)];
    let dispatch = conventions.len();
    for (i, c) in conventions.iter().enumerate() {
        // From the instruction after this jump to the start of block i: the rest of the
        // dispatch, the kill, and the blocks before it.
        let to = (dispatch - i - 1) + 1 + blocks[..i].iter().map(Vec::len).sum::<usize>();
        prog.push(jump(JEQ_K, c.arch, to, 0));
    }
    prog.push(stmt(RET_K, RET_KILL_PROCESS));
    for b in blocks {
        prog.extend(b);
    }
    prog
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `prog` returns for a call: a small interpreter of the instructions above.
    fn run(prog: &[sock_filter], arch: u32, nr: u32, args: [u64; 6]) -> u32 {
        let mut data = Vec::new();
        data.extend(nr.to_ne_bytes());
        data.extend(arch.to_ne_bytes());
        data.extend(0u64.to_ne_bytes());
        for a in args {
            data.extend(a.to_ne_bytes());
        }
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let i = prog[pc];
            pc += 1;
            let take = |cond: bool| if cond { i.jt as usize } else { i.jf as usize };
            match i.code {
                LD_W_ABS => {
                    let at = i.k as usize;
                    acc = u32::from_ne_bytes(data[at..at + 4].try_into().unwrap());
                }
                JEQ_K => pc += take(acc == i.k),
                JGE_K => pc += take(acc >= i.k),
                JSET_K => pc += take(acc & i.k != 0),
                RET_K => return i.k,
                other => panic!("instruction {other:#x} not interpreted"),
            }
        }
    }

    const EPERM: u32 = RET_ERRNO | libc::EPERM as u32;
    const ENOSYS: u32 = RET_ERRNO | libc::ENOSYS as u32;

    fn x86() -> Vec<sock_filter> {
        program(&[CONV_X86_64, CONV_I386])
    }

    #[test]
    fn set_id_modes_are_refused_and_others_allowed_on_x86_64() {
        let p = x86();
        let a = AUDIT_ARCH_X86_64;
        // chmod, fchmod: the mode is argument 1.
        for nr in [90, 91, 85, 133] {
            assert_eq!(run(&p, a, nr, [0, 0o4755, 0, 0, 0, 0]), EPERM, "{nr}");
            assert_eq!(run(&p, a, nr, [0, 0o2755, 0, 0, 0, 0]), EPERM, "{nr}");
            assert_eq!(run(&p, a, nr, [0, 0o6755, 0, 0, 0, 0]), EPERM, "{nr}");
            assert_eq!(run(&p, a, nr, [0, 0o755, 0, 0, 0, 0]), RET_ALLOW, "{nr}");
            // The sticky bit is not a set-id bit.
            assert_eq!(run(&p, a, nr, [0, 0o1777, 0, 0, 0, 0]), RET_ALLOW, "{nr}");
            // A set-id mode in another argument is not this call's mode.
            assert_eq!(run(&p, a, nr, [0o4755, 0o755, 0o4755, 0, 0, 0]), RET_ALLOW);
        }
        // fchmodat, fchmodat2, mknodat: argument 2.
        for nr in [268, 452, 259] {
            assert_eq!(run(&p, a, nr, [0, 0, 0o4755, 0, 0, 0]), EPERM, "{nr}");
            assert_eq!(run(&p, a, nr, [0, 0, 0o2700, 0, 0, 0]), EPERM, "{nr}");
            assert_eq!(
                run(&p, a, nr, [0, 0o4755, 0o755, 0, 0, 0]),
                RET_ALLOW,
                "{nr}"
            );
        }
        // The kernel reads 32 bits of a mode: the upper half changes nothing.
        assert_eq!(run(&p, a, 90, [0, 1 << 32 | 0o4755, 0, 0, 0, 0]), EPERM);
        assert_eq!(
            run(&p, a, 90, [0, 0o7 << 32 | 0o755, 0, 0, 0, 0]),
            RET_ALLOW
        );
    }

    #[test]
    fn an_open_is_refused_only_when_it_creates_with_a_set_id_mode() {
        let p = x86();
        let a = AUDIT_ARCH_X86_64;
        let (creat, tmpfile, wronly) = (0o100u64, 0o20_200_000u64, 0o1u64);
        // open: flags 1, mode 2; openat: flags 2, mode 3.
        for (nr, f, m) in [(2u32, 1usize, 2usize), (257, 2, 3)] {
            let call = |flags: u64, mode: u64| {
                let mut args = [0u64; 6];
                args[f] = flags;
                args[m] = mode;
                run(&p, a, nr, args)
            };
            assert_eq!(call(creat | wronly, 0o4755), EPERM, "{nr}");
            assert_eq!(call(creat, 0o2755), EPERM, "{nr}");
            assert_eq!(call(tmpfile | wronly, 0o4700), EPERM, "{nr}");
            assert_eq!(call(creat | wronly, 0o755), RET_ALLOW, "{nr}");
            // Without O_CREAT or O_TMPFILE the mode is not used.
            assert_eq!(call(wronly, 0o4755), RET_ALLOW, "{nr}");
            assert_eq!(call(0, 0), RET_ALLOW, "{nr}");
        }
    }

    #[test]
    fn openat2_io_uring_and_every_x32_call_are_absent() {
        let p = x86();
        let a = AUDIT_ARCH_X86_64;
        assert_eq!(run(&p, a, 437, [0; 6]), ENOSYS);
        assert_eq!(run(&p, a, 425, [0; 6]), ENOSYS);
        for nr in [0, 1, 2, 39, 90, 257, 512, 547] {
            assert_eq!(run(&p, a, X32_SYSCALL_BIT | nr, [0; 6]), ENOSYS, "{nr}");
        }
        // Other calls pass: read, write, getpid, execve.
        for nr in [0, 1, 39, 59] {
            assert_eq!(run(&p, a, nr, [0, 0o4755, 0o4755, 0o4755, 0, 0]), RET_ALLOW);
        }
    }

    #[test]
    fn i386_calls_have_their_own_numbers_and_other_conventions_end_the_process() {
        let p = x86();
        let a = AUDIT_ARCH_I386;
        assert_eq!(run(&p, a, 15, [0, 0o4755, 0, 0, 0, 0]), EPERM); // chmod
        assert_eq!(run(&p, a, 306, [0, 0, 0o2755, 0, 0, 0]), EPERM); // fchmodat
        assert_eq!(run(&p, a, 5, [0, 0o100, 0o4755, 0, 0, 0]), EPERM); // open
        assert_eq!(run(&p, a, 437, [0; 6]), ENOSYS); // openat2
        // 90 is i386's mmap, not chmod; 20 its getpid.
        assert_eq!(run(&p, a, 90, [0, 0o4755, 0, 0, 0, 0]), RET_ALLOW);
        assert_eq!(run(&p, a, 20, [0; 6]), RET_ALLOW);
        // x32 numbers are x86_64's only.
        assert_eq!(run(&p, a, X32_SYSCALL_BIT | 20, [0; 6]), RET_ALLOW);
        assert_eq!(run(&p, AUDIT_ARCH_AARCH64, 53, [0; 6]), RET_KILL_PROCESS);
    }

    #[test]
    fn arm64_has_only_the_at_calls() {
        let p = program(&[CONV_AARCH64]);
        let a = AUDIT_ARCH_AARCH64;
        assert_eq!(run(&p, a, 53, [0, 0, 0o4755, 0, 0, 0]), EPERM); // fchmodat
        assert_eq!(run(&p, a, 52, [0, 0o2755, 0, 0, 0, 0]), EPERM); // fchmod
        assert_eq!(run(&p, a, 33, [0, 0, 0o104755, 0, 0, 0]), EPERM); // mknodat
        assert_eq!(run(&p, a, 56, [0, 0, 0o100, 0o4755, 0, 0]), EPERM); // openat
        assert_eq!(run(&p, a, 56, [0, 0, 0, 0o4755, 0, 0]), RET_ALLOW);
        assert_eq!(run(&p, a, 425, [0; 6]), ENOSYS);
        // 90 is arm64's capget; no x32 there.
        assert_eq!(run(&p, a, 90, [0, 0o4755, 0, 0, 0, 0]), RET_ALLOW);
        assert_eq!(run(&p, a, X32_SYSCALL_BIT | 90, [0; 6]), RET_ALLOW);
        assert_eq!(run(&p, AUDIT_ARCH_X86_64, 90, [0; 6]), RET_KILL_PROCESS);
    }

    #[test]
    fn this_machine_has_a_filter_within_the_kernels_length() {
        if cfg!(any(target_arch = "x86_64", target_arch = "aarch64")) {
            let p = filter().unwrap();
            // BPF_MAXINSNS.
            assert!(p.len() <= 4096, "{}", p.len());
        }
    }
}
