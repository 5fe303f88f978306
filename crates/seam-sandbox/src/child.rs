//! The sandbox's side of the fork: the first process in the new namespaces (PID 1 of its PID
//! namespace) builds the filesystem view, restricts itself, starts Python and waits.
//!
//! This code runs in a child of the multi-threaded gate: it only makes system calls with
//! strings and tables the gate prepared ([`ChildPlan`]), never allocates, and never returns —
//! it ends in `execve` or `_exit`. Every failure is reported to the gate on the report pipe as
//! `[b'E', step, errno (4 bytes, native endian)]`; Python's end as `[b'X', wait status]`.

use std::ffi::{CString, c_char};
use std::os::fd::RawFd;

use rustix::fs::{Mode, StatVfsMountFlags};
use rustix::mount::{MountFlags, MountPropagationFlags, UnmountFlags};
use rustix::process::{Resource, Rlimit, Signal};

use crate::landlock::LandlockPlan;
use crate::sys::{self, Errno};

/// Where the sandbox's first process was when it failed (reported to the gate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Step {
    CloseInherited = 1,
    WaitForIdMaps,
    DeathSignal,
    MakeMountsPrivate,
    MountRoot,
    EnterRoot,
    MakeDir,
    BindMount,
    RemountReadOnly,
    Symlink,
    WriteRootFile,
    MountScratch,
    PivotRoot,
    DetachOldRoot,
    RemountRootReadOnly,
    EnterScratch,
    WriteScratchFile,
    Hostname,
    DropPrivileges,
    Rlimit,
    Landlock,
    Seccomp,
    ForkPython,
    SetUpStdio,
    ExecPython,
    ShowReadOnly,
}

impl Step {
    pub const ALL: [Step; 26] = [
        Step::CloseInherited,
        Step::WaitForIdMaps,
        Step::DeathSignal,
        Step::MakeMountsPrivate,
        Step::MountRoot,
        Step::EnterRoot,
        Step::MakeDir,
        Step::BindMount,
        Step::RemountReadOnly,
        Step::Symlink,
        Step::WriteRootFile,
        Step::MountScratch,
        Step::PivotRoot,
        Step::DetachOldRoot,
        Step::RemountRootReadOnly,
        Step::EnterScratch,
        Step::WriteScratchFile,
        Step::Hostname,
        Step::DropPrivileges,
        Step::Rlimit,
        Step::Landlock,
        Step::Seccomp,
        Step::ForkPython,
        Step::SetUpStdio,
        Step::ExecPython,
        Step::ShowReadOnly,
    ];

    pub fn from_byte(b: u8) -> Option<Step> {
        Step::ALL.into_iter().find(|s| *s as u8 == b)
    }

    /// What the step does, for an error message.
    pub fn describe(self) -> &'static str {
        match self {
            Step::CloseInherited => "closing the descriptors inherited from the gate",
            Step::WaitForIdMaps => "waiting for the gate to write the user namespace's id maps",
            Step::DeathSignal => "asking to die with the gate",
            Step::MakeMountsPrivate => "making the mount namespace private",
            Step::MountRoot => "mounting the sandbox's root (tmpfs)",
            Step::EnterRoot => "entering the sandbox's root",
            Step::MakeDir => "making a directory in the sandbox's root",
            Step::BindMount => "binding a system or Python directory into the sandbox",
            Step::RemountReadOnly => "making a bound directory read-only",
            Step::Symlink => "making a symbolic link in the sandbox's root",
            Step::WriteRootFile => "writing the sandbox's /etc files",
            Step::MountScratch => "mounting the scratch directory (tmpfs)",
            Step::PivotRoot => "switching to the sandbox's root (pivot_root)",
            Step::DetachOldRoot => "detaching the machine's root",
            Step::RemountRootReadOnly => "making the sandbox's root read-only",
            Step::EnterScratch => "entering the scratch directory",
            Step::WriteScratchFile => "writing the call's files into scratch",
            Step::Hostname => "setting the sandbox's host name",
            Step::DropPrivileges => "becoming the sandbox's unprivileged user",
            Step::Rlimit => "setting a resource limit",
            Step::Landlock => "restricting the sandbox with Landlock",
            Step::Seccomp => "installing the seccomp filter",
            Step::ForkPython => "starting the Python process",
            Step::SetUpStdio => "connecting Python's stdin, stdout and stderr",
            Step::ExecPython => "executing python3",
            Step::ShowReadOnly => "showing the call's read-only files",
        }
    }
}

/// A bind mount into the new root.
#[derive(Debug)]
pub struct Bind {
    /// The machine's path (absolute), walked inside the new namespaces before the pivot.
    pub source: CString,
    /// Relative to the new root.
    pub target: CString,
    /// A file (the target is created as an empty file), else a directory.
    pub file: bool,
    /// A device file: keeps the device usable (no `nodev`).
    pub device: bool,
}

/// Everything the sandbox's first process needs, prepared by the gate before the fork.
#[derive(Debug)]
pub struct ChildPlan {
    /// Fds the child keeps (sorted); every other inherited fd is closed first.
    pub keep_fds: Vec<RawFd>,
    pub sync_read: RawFd,
    pub report_write: RawFd,
    pub stdin: RawFd,
    pub stdout: RawFd,
    pub stderr: RawFd,
    /// An existing directory of the machine to mount the new root's tmpfs on (in the private
    /// mount namespace only).
    pub root_mountpoint: CString,
    pub root_tmpfs_options: CString,
    /// Relative to the new root, parents first.
    pub dirs: Vec<CString>,
    pub binds: Vec<Bind>,
    /// (target, link) relative to the new root.
    pub symlinks: Vec<(CString, CString)>,
    /// Files written into the new root before it turns read-only (relative path, content).
    pub root_files: Vec<(CString, Vec<u8>)>,
    /// Files shown read-only at their place in the new root (relative path, content): the
    /// root turns read-only, so they are too.
    pub ro_root_files: Vec<(CString, Vec<u8>)>,
    /// Where copies to bind under scratch are staged (relative to the new root), on a tmpfs
    /// of their own that turns read-only; detached and removed once they are bound.
    pub ro_stage_dir: CString,
    pub ro_stage_tmpfs_options: CString,
    /// Directories under scratch for the read-only files, relative to the new root
    /// (`scratch/data`), parents first.
    pub ro_scratch_dirs: Vec<CString>,
    /// (staged copy, target under scratch, content), relative to the new root: the copy is
    /// bound read-only onto the target, then its staged name removed.
    pub ro_binds: Vec<(CString, CString, Vec<u8>)>,
    /// Relative to the new root.
    pub scratch_dir: CString,
    pub scratch_tmpfs_options: CString,
    /// `dev/shm` (relative to the new root): a small tmpfs for POSIX shared memory and
    /// semaphores (`multiprocessing`).
    pub shm_dir: CString,
    pub shm_tmpfs_options: CString,
    /// Absolute inside the sandbox.
    pub scratch_abs: CString,
    /// Relative to scratch, parents first.
    pub scratch_dirs: Vec<CString>,
    pub scratch_files: Vec<(CString, Vec<u8>)>,
    pub hostname: &'static [u8],
    /// When the gate runs as root: the sandbox's first process is root in its namespace to
    /// build the view, then becomes this (uid, gid) inside before anything untrusted runs.
    pub drop_to: Option<(u32, u32)>,
    pub rlimits: Vec<(Resource, u64, u64)>,
    pub landlock: LandlockPlan,
    pub seccomp: Vec<libc::sock_filter>,
    pub exe: CString,
    pub argv: Vec<CString>,
    pub envp: Vec<CString>,
    pub argv_ptrs: Vec<*const c_char>,
    pub envp_ptrs: Vec<*const c_char>,
}

impl ChildPlan {
    /// Fills the pointer arrays `execve` takes (NULL-terminated).
    pub fn seal(&mut self) {
        self.argv_ptrs = self
            .argv
            .iter()
            .map(|a| a.as_ptr())
            .chain([std::ptr::null()])
            .collect();
        self.envp_ptrs = self
            .envp
            .iter()
            .map(|a| a.as_ptr())
            .chain([std::ptr::null()])
            .collect();
    }
}

type StepResult = Result<(), (Step, Errno)>;

trait At<T> {
    fn at(self, step: Step) -> Result<T, (Step, Errno)>;
}

impl<T> At<T> for Result<T, Errno> {
    fn at(self, step: Step) -> Result<T, (Step, Errno)> {
        self.map_err(|e| (step, e))
    }
}

fn report_failure(fd: RawFd, step: Step, errno: Errno) {
    let e = errno.raw_os_error().to_ne_bytes();
    let msg = [b'E', step as u8, e[0], e[1], e[2], e[3]];
    let _ = sys::write_all(fd, &msg);
}

/// The sandbox's first process. Never returns.
pub fn init_main(plan: &ChildPlan) -> ! {
    match init_steps(plan) {
        Ok(never) => match never {},
        Err((step, errno)) => {
            report_failure(plan.report_write, step, errno);
            sys::exit(127)
        }
    }
}

enum Never {}

fn init_steps(plan: &ChildPlan) -> Result<Never, (Step, Errno)> {
    close_all_but(&plan.keep_fds).at(Step::CloseInherited)?;
    wait_for_maps(plan.sync_read)?;
    rustix::process::set_parent_process_death_signal(Some(Signal::KILL)).at(Step::DeathSignal)?;
    build_root(plan)?;
    sys_hostname(plan.hostname)?;
    if let Some((uid, gid)) = plan.drop_to {
        drop_privileges(uid, gid).at(Step::DropPrivileges)?;
        // a change of credentials clears the parent-death signal: ask again
        rustix::process::set_parent_process_death_signal(Some(Signal::KILL))
            .at(Step::DeathSignal)?;
    }
    // The namespace's creator (an ordinary owner's case) still holds every capability in it:
    // this process, the init that stays beside Python, gives them all up too.
    let none = rustix::thread::CapabilitySet::empty();
    rustix::thread::set_capabilities(
        None,
        rustix::thread::CapabilitySets {
            effective: none,
            permitted: none,
            inheritable: none,
        },
    )
    .at(Step::DropPrivileges)?;
    fill_scratch(plan)?;
    for &(resource, soft, hard) in &plan.rlimits {
        rustix::process::setrlimit(
            resource,
            Rlimit {
                current: Some(soft),
                maximum: Some(hard),
            },
        )
        .at(Step::Rlimit)?;
    }
    plan.landlock.restrict_self().at(Step::Landlock)?;
    sys::seccomp_install(&plan.seccomp).at(Step::Seccomp)?;

    // SAFETY: this process is itself a fork of the gate that only does async-signal-safe work;
    // the new child keeps to the same (python_main ends in execve or _exit).
    let python = unsafe { sys::fork_raw() }.at(Step::ForkPython)?;
    let Some(python) = python else {
        python_main(plan)
    };
    // The init: hold nothing Python's output could wait on, reap every orphan, and leave
    // (taking the whole namespace with it) once Python has ended.
    for fd in [plan.stdin, plan.stdout, plan.stderr] {
        sys::close(fd);
    }
    loop {
        match sys::wait_any() {
            Ok((pid, status)) if pid == python => {
                let s = status.to_ne_bytes();
                let _ = sys::write_all(plan.report_write, &[b'X', s[0], s[1], s[2], s[3]]);
                sys::exit(0);
            }
            Ok(_) => {}
            Err(_) => sys::exit(0),
        }
    }
}

fn python_main(plan: &ChildPlan) -> ! {
    let stdio = (|| {
        sys::dup_onto(plan.stdin, 0)?;
        sys::dup_onto(plan.stdout, 1)?;
        sys::dup_onto(plan.stderr, 2)?;
        // Keep only 0, 1, 2 and the report pipe (close-on-exec: gone at execve).
        let r = plan.report_write as u32;
        sys::close_range(3, r.saturating_sub(1))?;
        sys::close_range(r + 1, u32::MAX)?;
        sys::reset_signals()
    })();
    if let Err(e) = stdio {
        report_failure(plan.report_write, Step::SetUpStdio, e);
        sys::exit(127);
    }
    let e = sys::execve(&plan.exe, &plan.argv_ptrs, &plan.envp_ptrs);
    report_failure(plan.report_write, Step::ExecPython, e);
    sys::exit(127)
}

/// Closes every fd from 3 up except those in `keep` (sorted).
fn close_all_but(keep: &[RawFd]) -> Result<(), Errno> {
    let mut next: u32 = 3;
    for &fd in keep {
        let fd = fd as u32;
        if fd >= next {
            if fd > next {
                sys::close_range(next, fd - 1)?;
            }
            next = fd + 1;
        }
    }
    sys::close_range(next, u32::MAX)
}

fn wait_for_maps(fd: RawFd) -> StepResult {
    let mut byte = [0u8; 1];
    let n = sys::read(fd, &mut byte).at(Step::WaitForIdMaps)?;
    sys::close(fd);
    if n == 1 && byte[0] == b'G' {
        Ok(())
    } else {
        // the gate closed the pipe without saying go: it could not write the maps
        Err((Step::WaitForIdMaps, Errno::CANCELED))
    }
}

fn sys_hostname(name: &[u8]) -> StepResult {
    rustix::system::sethostname(name).at(Step::Hostname)
}

/// Read-only remount flags: keep the flags the kernel locks (`nosuid`, `nodev`, `noexec`, the
/// atime flags) as they are, add `nosuid` (and `nodev` unless it is a device).
fn readonly_flags(target: &std::ffi::CStr, device: bool) -> Result<MountFlags, Errno> {
    let st = rustix::fs::statvfs(target)?;
    let mut flags = MountFlags::BIND | MountFlags::RDONLY | MountFlags::NOSUID;
    if !device {
        flags |= MountFlags::NODEV;
    }
    let f = st.f_flag;
    for (vfs, mnt) in [
        (StatVfsMountFlags::NODEV, MountFlags::NODEV),
        (StatVfsMountFlags::NOEXEC, MountFlags::NOEXEC),
        (StatVfsMountFlags::NOATIME, MountFlags::NOATIME),
        (StatVfsMountFlags::NODIRATIME, MountFlags::NODIRATIME),
        (StatVfsMountFlags::RELATIME, MountFlags::RELATIME),
    ] {
        if f.contains(vfs) {
            flags |= mnt;
        }
    }
    Ok(flags)
}

fn build_root(plan: &ChildPlan) -> StepResult {
    rustix::mount::mount_change(
        c"/",
        MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
    )
    .at(Step::MakeMountsPrivate)?;
    rustix::mount::mount(
        c"tmpfs",
        plan.root_mountpoint.as_c_str(),
        c"tmpfs",
        MountFlags::NOSUID | MountFlags::NODEV,
        plan.root_tmpfs_options.as_c_str(),
    )
    .at(Step::MountRoot)?;
    rustix::process::chdir(plan.root_mountpoint.as_c_str()).at(Step::EnterRoot)?;

    for dir in &plan.dirs {
        rustix::fs::mkdir(dir.as_c_str(), Mode::from_raw_mode(0o755)).at(Step::MakeDir)?;
    }
    for bind in &plan.binds {
        if bind.file {
            let fd = sys::create_file(&bind.target, 0o644).at(Step::BindMount)?;
            sys::close(fd);
        }
        rustix::mount::mount_bind_recursive(bind.source.as_c_str(), bind.target.as_c_str())
            .at(Step::BindMount)?;
        let flags = readonly_flags(&bind.target, bind.device).at(Step::RemountReadOnly)?;
        rustix::mount::mount_remount(bind.target.as_c_str(), flags, c"")
            .at(Step::RemountReadOnly)?;
    }
    for (target, link) in &plan.symlinks {
        rustix::fs::symlink(target.as_c_str(), link.as_c_str()).at(Step::Symlink)?;
    }
    for (path, content) in &plan.root_files {
        write_new_file(path, 0o644, content).at(Step::WriteRootFile)?;
    }
    for (path, content) in &plan.ro_root_files {
        write_new_file(path, 0o444, content).at(Step::ShowReadOnly)?;
    }
    rustix::fs::mkdir(plan.scratch_dir.as_c_str(), Mode::from_raw_mode(0o755))
        .at(Step::MountScratch)?;
    rustix::mount::mount(
        c"tmpfs",
        plan.scratch_dir.as_c_str(),
        c"tmpfs",
        MountFlags::NOSUID | MountFlags::NODEV,
        plan.scratch_tmpfs_options.as_c_str(),
    )
    .at(Step::MountScratch)?;
    rustix::fs::mkdir(plan.shm_dir.as_c_str(), Mode::from_raw_mode(0o755))
        .at(Step::MountScratch)?;
    rustix::mount::mount(
        c"tmpfs",
        plan.shm_dir.as_c_str(),
        c"tmpfs",
        MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
        plan.shm_tmpfs_options.as_c_str(),
    )
    .at(Step::MountScratch)?;
    bind_read_only_files(plan).at(Step::ShowReadOnly)?;

    // The new root replaces the machine's; the machine's is detached and gone from view.
    rustix::process::pivot_root(c".", c".").at(Step::PivotRoot)?;
    rustix::mount::unmount(c".", UnmountFlags::DETACH).at(Step::DetachOldRoot)?;
    rustix::process::chdir(c"/").at(Step::DetachOldRoot)?;
    rustix::mount::mount_remount(
        c"/",
        MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV,
        c"",
    )
    .at(Step::RemountRootReadOnly)?;

    Ok(())
}

fn write_new_file(path: &std::ffi::CStr, mode: libc::mode_t, content: &[u8]) -> Result<(), Errno> {
    let fd = sys::create_file(path, mode)?;
    let written = sys::write_all(fd, content);
    sys::close(fd);
    written
}

/// The read-only files under scratch: the copies are written into a tmpfs of their own,
/// which then turns read-only; each is bound onto an empty file of its name under scratch
/// (the bind read-only too), and the staging tmpfs is detached (the binds keep it). The
/// directories are the sandbox user's, so the code can still add files beside them.
fn bind_read_only_files(plan: &ChildPlan) -> Result<(), Errno> {
    if plan.ro_binds.is_empty() {
        return Ok(());
    }
    let stage = plan.ro_stage_dir.as_c_str();
    rustix::fs::mkdir(stage, Mode::from_raw_mode(0o700))?;
    rustix::mount::mount(
        c"tmpfs",
        stage,
        c"tmpfs",
        MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
        plan.ro_stage_tmpfs_options.as_c_str(),
    )?;
    for (copy, _, content) in &plan.ro_binds {
        write_new_file(copy, 0o444, content)?;
    }
    rustix::mount::mount_remount(
        stage,
        MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
        c"",
    )?;
    for dir in &plan.ro_scratch_dirs {
        rustix::fs::mkdir(dir.as_c_str(), Mode::from_raw_mode(0o755))?;
        if let Some((uid, gid)) = plan.drop_to {
            rustix::fs::chown(
                dir.as_c_str(),
                Some(rustix::process::Uid::from_raw(uid)),
                Some(rustix::process::Gid::from_raw(gid)),
            )?;
        }
    }
    for (copy, target, _) in &plan.ro_binds {
        sys::close(sys::create_file(target, 0o444)?);
        rustix::mount::mount_bind(copy.as_c_str(), target.as_c_str())?;
        let flags = readonly_flags(target, false)? | MountFlags::NOEXEC;
        rustix::mount::mount_remount(target.as_c_str(), flags, c"")?;
    }
    rustix::mount::unmount(stage, UnmountFlags::DETACH)?;
    rustix::fs::rmdir(stage)
}

/// Root in the namespace → the sandbox's user: no supplementary groups, and (by the kernel's
/// rule for a change away from uid 0) no capabilities left.
fn drop_privileges(uid: u32, gid: u32) -> Result<(), Errno> {
    use rustix::process::{Gid, Uid};
    rustix::thread::set_thread_groups(&[])?;
    let gid = Gid::from_raw(gid);
    rustix::thread::set_thread_res_gid(gid, gid, gid)?;
    let uid = Uid::from_raw(uid);
    rustix::thread::set_thread_res_uid(uid, uid, uid)
}

/// Enters scratch and writes the call's files there, as the sandbox's user.
fn fill_scratch(plan: &ChildPlan) -> StepResult {
    rustix::process::chdir(plan.scratch_abs.as_c_str()).at(Step::EnterScratch)?;
    for dir in &plan.scratch_dirs {
        // a directory may already be there, made for a read-only file
        match rustix::fs::mkdir(dir.as_c_str(), Mode::from_raw_mode(0o755)) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(e) => return Err((Step::WriteScratchFile, e)),
        }
    }
    for (path, content) in &plan.scratch_files {
        let fd = sys::create_file(path, 0o644).at(Step::WriteScratchFile)?;
        let written = sys::write_all(fd, content);
        sys::close(fd);
        written.at(Step::WriteScratchFile)?;
    }
    Ok(())
}
