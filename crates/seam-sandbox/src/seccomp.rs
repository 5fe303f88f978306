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
//! 5. `socket` and `socketpair` for any family but `AF_UNIX` return EAFNOSUPPORT;
//! 6. everything else is allowed.

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

/// The filter program, built from [`DENIED`] in the shape described in the module doc.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub fn program() -> Vec<sock_filter> {
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
    // socket / socketpair: AF_UNIX only.
    for nr in [libc::SYS_socket, libc::SYS_socketpair] {
        p.extend([
            jump(JEQ_K, nr as u32, 0, 4),
            stmt(LD_W_ABS, OFF_ARG0_LOW),
            jump(JEQ_K, libc::AF_UNIX as u32, 0, 1),
            stmt(RET_K, RET_ALLOW),
            errno(libc::EAFNOSUPPORT),
        ]);
    }
    p.push(stmt(RET_K, RET_ALLOW));
    p
}

/// No filter for this architecture: the probe reports seccomp as missing.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub fn program() -> Vec<sock_filter> {
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
