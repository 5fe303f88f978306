//! The seccomp filter, kept as reviewed data: [`DENIED`] lists every system call the sandboxed
//! code is refused, with the reason, and [`program`] turns the table into classic BPF with one
//! fixed shape. Everything not listed is allowed: the filter is a deny-list of what sandboxed
//! code never needs, behind the namespaces and Landlock, not the only wall.
//!
//! The shape of the program:
//! 1. a system call from another architecture (the 32-bit entry points of a 64-bit kernel)
//!    kills the process — the table's numbers would mean other calls there;
//! 2. on x86-64, a call with the x32 bit set is refused;
//! 3. each call in [`DENIED`] returns its errno;
//! 4. `clone` with any namespace flag returns EPERM; `clone3` returns ENOSYS (its flags are in
//!    memory a filter cannot read, and C libraries fall back to `clone`, which is checked);
//! 5. `socket` and `socketpair` for any family but `AF_UNIX` return EAFNOSUPPORT — or, in
//!    the agent's filter ([`Sockets::UnixAndTcp`]), `AF_INET`/`AF_INET6` are allowed for
//!    `SOCK_STREAM` alone (TCP to the model: no UDP, no raw, no netlink, no packet sockets);
//! 6. `ioctl` with `TIOCSTI` or `TIOCLINUX` returns EPERM: both put bytes into a terminal's
//!    input, as if the operator had typed them, and the agent holds the operator's terminal
//!    on its stdin and stdout (the gate asks the operator for consent on that terminal);
//! 7. everything else is allowed.
//!
//! One table serves both walls: python.run's sandbox ([`program`]) and the `seam ask` agent
//! process ([`agent_program`], installed by `agent_wall`). The agent runs git, dot and
//! formatters, none of which needs a call in the table; `io_uring` is in it, which matters
//! twice over for the agent: its socket operations would not pass through this filter.

use libc::sock_filter;

/// A system call the sandboxed code is refused, and why.
#[derive(Debug, Clone, Copy)]
pub struct Denied {
    pub nr: libc::c_long,
    pub name: &'static str,
    pub why: &'static str,
}

macro_rules! deny {
    ($name:ident, $why:expr) => {
        Denied {
            nr: libc::$name,
            name: stringify!($name),
            why: $why,
        }
    };
}

const WATCH: &str = "watching or steering another process";
const MOUNT: &str = "changing the filesystem view the sandbox was given";
const NAMESPACE: &str = "leaving or remaking the sandbox's namespaces";
const KEYS: &str = "the kernel keyring holds other processes' secrets";
const KERNEL: &str = "loading code into the kernel or replacing it";
const MACHINE: &str = "changing the machine's state (clock, swap, power, accounting)";
const HANDLES: &str = "opening files by handle bypasses the path walls";
const SURFACE: &str = "a large kernel attack surface sandboxed code never needs";

/// Every system call the sandboxed code is refused (EPERM), on every architecture.
pub const DENIED: &[Denied] = &[
    deny!(SYS_ptrace, WATCH),
    deny!(SYS_process_vm_readv, WATCH),
    deny!(SYS_process_vm_writev, WATCH),
    deny!(SYS_kcmp, WATCH),
    deny!(SYS_pidfd_getfd, WATCH),
    deny!(SYS_process_madvise, WATCH),
    deny!(SYS_mount, MOUNT),
    deny!(SYS_umount2, MOUNT),
    deny!(SYS_pivot_root, MOUNT),
    deny!(SYS_chroot, MOUNT),
    deny!(SYS_move_mount, MOUNT),
    deny!(SYS_open_tree, MOUNT),
    deny!(SYS_fsopen, MOUNT),
    deny!(SYS_fsconfig, MOUNT),
    deny!(SYS_fsmount, MOUNT),
    deny!(SYS_fspick, MOUNT),
    deny!(SYS_mount_setattr, MOUNT),
    deny!(SYS_unshare, NAMESPACE),
    deny!(SYS_setns, NAMESPACE),
    deny!(SYS_keyctl, KEYS),
    deny!(SYS_add_key, KEYS),
    deny!(SYS_request_key, KEYS),
    deny!(SYS_bpf, KERNEL),
    deny!(SYS_perf_event_open, SURFACE),
    deny!(SYS_kexec_load, KERNEL),
    deny!(SYS_kexec_file_load, KERNEL),
    deny!(SYS_init_module, KERNEL),
    deny!(SYS_finit_module, KERNEL),
    deny!(SYS_delete_module, KERNEL),
    deny!(SYS_userfaultfd, SURFACE),
    deny!(SYS_io_uring_setup, SURFACE),
    deny!(SYS_io_uring_enter, SURFACE),
    deny!(SYS_io_uring_register, SURFACE),
    deny!(SYS_fanotify_init, WATCH),
    deny!(SYS_open_by_handle_at, HANDLES),
    deny!(SYS_name_to_handle_at, HANDLES),
    deny!(SYS_swapon, MACHINE),
    deny!(SYS_swapoff, MACHINE),
    deny!(SYS_reboot, MACHINE),
    deny!(SYS_acct, MACHINE),
    deny!(SYS_quotactl, MACHINE),
    deny!(SYS_settimeofday, MACHINE),
    deny!(SYS_clock_settime, MACHINE),
    deny!(SYS_clock_adjtime, MACHINE),
    deny!(SYS_adjtimex, MACHINE),
    deny!(SYS_syslog, MACHINE),
    deny!(SYS_vhangup, MACHINE),
    #[cfg(target_arch = "x86_64")]
    deny!(SYS_iopl, MACHINE),
    #[cfg(target_arch = "x86_64")]
    deny!(SYS_ioperm, MACHINE),
    #[cfg(target_arch = "x86_64")]
    deny!(SYS_uselib, KERNEL),
];

/// The namespace flags `clone` may not carry (`CLONE_NEWTIME` is not among them: in `clone`'s
/// flags that bit is part of the exit signal).
pub const CLONE_NAMESPACE_FLAGS: u64 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET) as u64;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xc000_003e; // AUDIT_ARCH_X86_64
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xc000_00b7; // AUDIT_ARCH_AARCH64

/// Is there a filter for this architecture?
pub const SUPPORTED: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

// Classic BPF opcodes.
const LD_W_ABS: u16 = 0x20;
const JEQ_K: u16 = 0x15;
const JGE_K: u16 = 0x35;
const JSET_K: u16 = 0x45;
const RET_K: u16 = 0x06;
// seccomp return values.
const RET_KILL_PROCESS: u32 = 0x8000_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const RET_ALLOW: u32 = 0x7fff_0000;
// Offsets into `struct seccomp_data`.
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
const OFF_ARG0_LOW: u32 = 16;
const OFF_ARG1_LOW: u32 = 24;
// A &= k.
const ALU_AND_K: u16 = 0x54;

fn stmt(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

fn errno(e: i32) -> sock_filter {
    stmt(RET_K, RET_ERRNO | (e as u32 & 0xffff))
}

/// Which sockets a filter lets a process make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sockets {
    /// `AF_UNIX` only (python.run: no network namespace route out exists anyway).
    UnixOnly,
    /// `AF_UNIX`, and TCP over IPv4/IPv6 (`SOCK_STREAM`): the agent's gate socket and model.
    UnixAndTcp,
}

/// The low bits of `socket`'s type argument that name the type (the rest are flags such as
/// `SOCK_NONBLOCK` and `SOCK_CLOEXEC`): the kernel's `SOCK_TYPE_MASK`.
const SOCK_TYPE_MASK: u32 = 0xf;

/// python.run's filter: [`program_for`] with [`Sockets::UnixOnly`].
pub fn program() -> Vec<sock_filter> {
    program_for(Sockets::UnixOnly)
}

/// The agent's filter: [`program_for`] with [`Sockets::UnixAndTcp`].
pub fn agent_program() -> Vec<sock_filter> {
    program_for(Sockets::UnixAndTcp)
}

/// The filter program, built from [`DENIED`] in the shape described in the module doc.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn program_for(sockets: Sockets) -> Vec<sock_filter> {
    let mut p = vec![
        stmt(LD_W_ABS, OFF_ARCH),
        jump(JEQ_K, AUDIT_ARCH, 1, 0),
        stmt(RET_K, RET_KILL_PROCESS),
        stmt(LD_W_ABS, OFF_NR),
    ];
    if cfg!(target_arch = "x86_64") {
        // x32 system calls: the number with bit 30 set.
        p.push(jump(JGE_K, 0x4000_0000, 0, 1));
        p.push(errno(libc::EPERM));
    }
    for d in DENIED {
        p.push(jump(JEQ_K, d.nr as u32, 0, 1));
        p.push(errno(libc::EPERM));
    }
    // ioctl: no typing into a terminal (TIOCSTI, and TIOCLINUX's paste). The request is
    // argument 1, an unsigned int to the kernel.
    p.extend([
        jump(JEQ_K, libc::SYS_ioctl as u32, 0, 5),
        stmt(LD_W_ABS, OFF_ARG1_LOW),
        jump(JEQ_K, libc::TIOCSTI as u32, 2, 0),
        jump(JEQ_K, libc::TIOCLINUX as u32, 1, 0),
        stmt(RET_K, RET_ALLOW),
        errno(libc::EPERM),
    ]);
    // clone3: its flags are behind a pointer; ENOSYS makes libc fall back to clone.
    p.push(jump(JEQ_K, libc::SYS_clone3 as u32, 0, 1));
    p.push(errno(libc::ENOSYS));
    // clone with a namespace flag (the flags are argument 0 on every architecture).
    p.extend([
        jump(JEQ_K, libc::SYS_clone as u32, 0, 4),
        stmt(LD_W_ABS, OFF_ARG0_LOW),
        jump(JSET_K, CLONE_NAMESPACE_FLAGS as u32, 0, 1),
        errno(libc::EPERM),
        stmt(RET_K, RET_ALLOW),
    ]);
    match sockets {
        // socket / socketpair: AF_UNIX only.
        Sockets::UnixOnly => {
            for nr in [libc::SYS_socket, libc::SYS_socketpair] {
                p.extend([
                    jump(JEQ_K, nr as u32, 0, 4),
                    stmt(LD_W_ABS, OFF_ARG0_LOW),
                    jump(JEQ_K, libc::AF_UNIX as u32, 0, 1),
                    stmt(RET_K, RET_ALLOW),
                    errno(libc::EAFNOSUPPORT),
                ]);
            }
        }
        // socketpair: AF_UNIX only. socket: AF_UNIX, or AF_INET/AF_INET6 with the type
        // SOCK_STREAM (argument 1, its type bits).
        Sockets::UnixAndTcp => {
            p.extend([
                jump(JEQ_K, libc::SYS_socketpair as u32, 0, 4),
                stmt(LD_W_ABS, OFF_ARG0_LOW),
                jump(JEQ_K, libc::AF_UNIX as u32, 0, 1),
                stmt(RET_K, RET_ALLOW),
                errno(libc::EAFNOSUPPORT),
            ]);
            p.extend([
                jump(JEQ_K, libc::SYS_socket as u32, 0, 10),
                stmt(LD_W_ABS, OFF_ARG0_LOW),
                jump(JEQ_K, libc::AF_UNIX as u32, 7, 0),
                jump(JEQ_K, libc::AF_INET as u32, 1, 0),
                jump(JEQ_K, libc::AF_INET6 as u32, 0, 4),
                stmt(LD_W_ABS, OFF_ARG1_LOW),
                stmt(ALU_AND_K, SOCK_TYPE_MASK),
                jump(JEQ_K, libc::SOCK_STREAM as u32, 2, 0),
                errno(libc::EPERM),
                errno(libc::EAFNOSUPPORT),
                stmt(RET_K, RET_ALLOW),
            ]);
        }
    }
    p.push(stmt(RET_K, RET_ALLOW));
    p
}

/// No filter for this architecture: the probe reports seccomp as missing.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn program_for(_sockets: Sockets) -> Vec<sock_filter> {
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn the_table_names_each_call_once() {
        let mut seen = BTreeSet::new();
        for d in DENIED {
            assert!(seen.insert(d.nr), "{} is listed twice", d.name);
            assert!(!d.why.is_empty());
        }
        for special in [libc::SYS_clone, libc::SYS_clone3, libc::SYS_socket] {
            assert!(!seen.contains(&special));
        }
    }

    #[test]
    fn the_program_checks_the_architecture_first_and_ends_in_allow() {
        let p = program();
        assert!(p.len() < 4096);
        assert_eq!(p[0].code, LD_W_ABS);
        assert_eq!(p[0].k, OFF_ARCH);
        assert_eq!(p[2].k, RET_KILL_PROCESS);
        assert_eq!(p.last().map(|i| i.k), Some(RET_ALLOW));
        // every jump lands inside the program
        for (i, ins) in p.iter().enumerate() {
            if ins.code & 0x07 == 0x05 {
                assert!(
                    i + 1 + (ins.jt.max(ins.jf) as usize) < p.len(),
                    "jump at {i}"
                );
            }
        }
    }

    /// A classic-BPF interpreter for the few opcodes the programs use: the oracle the
    /// agent's socket rule is checked against.
    fn run(p: &[sock_filter], nr: i64, args: [u64; 2]) -> u32 {
        let data = |off: u32| -> u32 {
            match off {
                OFF_NR => nr as u32,
                OFF_ARCH => AUDIT_ARCH,
                OFF_ARG0_LOW => args[0] as u32,
                OFF_ARG1_LOW => args[1] as u32,
                other => panic!("load of offset {other}"),
            }
        };
        let (mut pc, mut a) = (0usize, 0u32);
        loop {
            let i = p[pc];
            match i.code {
                LD_W_ABS => a = data(i.k),
                ALU_AND_K => a &= i.k,
                RET_K => return i.k,
                JEQ_K | JGE_K | JSET_K => {
                    let hit = match i.code {
                        JEQ_K => a == i.k,
                        JGE_K => a >= i.k,
                        _ => a & i.k != 0,
                    };
                    pc += usize::from(if hit { i.jt } else { i.jf });
                }
                other => panic!("opcode {other:#x}"),
            }
            pc += 1;
        }
    }

    #[test]
    fn the_agent_may_make_unix_and_tcp_sockets_and_nothing_else() {
        let p = agent_program();
        let sock = libc::SYS_socket;
        let flags = (libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK) as u64;
        let allow = |fam: i32, ty: i32| run(&p, sock, [fam as u64, ty as u64 | flags]);
        assert_eq!(allow(libc::AF_UNIX, libc::SOCK_STREAM), RET_ALLOW);
        assert_eq!(allow(libc::AF_UNIX, libc::SOCK_DGRAM), RET_ALLOW);
        assert_eq!(allow(libc::AF_INET, libc::SOCK_STREAM), RET_ALLOW);
        assert_eq!(allow(libc::AF_INET6, libc::SOCK_STREAM), RET_ALLOW);
        let eperm = RET_ERRNO | libc::EPERM as u32;
        let eafno = RET_ERRNO | libc::EAFNOSUPPORT as u32;
        assert_eq!(allow(libc::AF_INET, libc::SOCK_DGRAM), eperm, "UDP");
        assert_eq!(allow(libc::AF_INET6, libc::SOCK_DGRAM), eperm, "UDP6");
        assert_eq!(allow(libc::AF_INET, libc::SOCK_RAW), eperm, "raw");
        assert_eq!(allow(libc::AF_NETLINK, libc::SOCK_RAW), eafno, "netlink");
        assert_eq!(allow(libc::AF_PACKET, libc::SOCK_RAW), eafno, "packet");
        assert_eq!(
            run(&p, libc::SYS_socketpair, [libc::AF_INET as u64, 1]),
            eafno
        );
        assert_eq!(
            run(&p, libc::SYS_socketpair, [libc::AF_UNIX as u64, 1]),
            RET_ALLOW
        );
        assert_eq!(run(&p, libc::SYS_ptrace, [0, 0]), eperm);
        assert_eq!(run(&p, libc::SYS_io_uring_setup, [0, 0]), eperm);
        assert_eq!(run(&p, libc::SYS_read, [0, 0]), RET_ALLOW);
        // no typing into a terminal, in either filter; other ioctls pass (the request
        // constants' type differs between C libraries)
        #[allow(clippy::unnecessary_cast)]
        for p in [agent_program(), program()] {
            let ioctl = |req: u64| run(&p, libc::SYS_ioctl, [0, req]);
            assert_eq!(ioctl(libc::TIOCSTI as u64), eperm);
            assert_eq!(ioctl(libc::TIOCLINUX as u64), eperm);
            assert_eq!(ioctl(libc::TCGETS as u64), RET_ALLOW);
            assert_eq!(ioctl(libc::FIONREAD as u64), RET_ALLOW);
        }
        // python.run's filter is unchanged: no TCP
        assert_eq!(
            run(
                &program(),
                sock,
                [libc::AF_INET as u64, libc::SOCK_STREAM as u64]
            ),
            eafno
        );
    }

    #[test]
    fn every_denied_call_is_followed_by_its_errno() {
        let p = program();
        for d in DENIED {
            let at = p
                .iter()
                .position(|i| i.code == JEQ_K && i.k == d.nr as u32)
                .unwrap_or_else(|| panic!("{} is not in the program", d.name));
            assert_eq!(p[at + 1].k, RET_ERRNO | libc::EPERM as u32, "{}", d.name);
        }
    }
}
