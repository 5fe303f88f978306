//! Landlock, the second wall: a ruleset that allows reading and executing the system and Python
//! directories, reading and writing the scratch directory and a few device files, and nothing
//! else — no TCP bind or connect where the kernel's ABI has network rules (ABI 4), and no
//! signal or abstract-socket reach outside the sandbox where it has scopes (ABI 6).
//!
//! The ruleset is built with raw system calls in the sandbox's first process, after the mounts
//! (so the rules name the sandbox's own view), where nothing may allocate: a process forked from
//! a multi-threaded gate must not take the allocator's locks. The plan (masks, paths) is made in
//! the gate beforehand.

use std::ffi::CString;

use crate::sys::{self, Errno};

// Filesystem access rights (include/uapi/linux/landlock.h).
pub const FS_EXECUTE: u64 = 1 << 0;
pub const FS_WRITE_FILE: u64 = 1 << 1;
pub const FS_READ_FILE: u64 = 1 << 2;
pub const FS_READ_DIR: u64 = 1 << 3;
pub const FS_REMOVE_DIR: u64 = 1 << 4;
pub const FS_REMOVE_FILE: u64 = 1 << 5;
#[allow(dead_code)] // in the handled set; never allowed
pub const FS_MAKE_CHAR: u64 = 1 << 6;
pub const FS_MAKE_DIR: u64 = 1 << 7;
pub const FS_MAKE_REG: u64 = 1 << 8;
pub const FS_MAKE_SOCK: u64 = 1 << 9;
pub const FS_MAKE_FIFO: u64 = 1 << 10;
#[allow(dead_code)] // in the handled set; never allowed
pub const FS_MAKE_BLOCK: u64 = 1 << 11;
pub const FS_MAKE_SYM: u64 = 1 << 12;
/// ABI 2.
pub const FS_REFER: u64 = 1 << 13;
/// ABI 3.
pub const FS_TRUNCATE: u64 = 1 << 14;
/// ABI 5.
pub const FS_IOCTL_DEV: u64 = 1 << 15;
// Network access rights (ABI 4).
pub const NET_BIND_TCP: u64 = 1 << 0;
pub const NET_CONNECT_TCP: u64 = 1 << 1;
// Scopes (ABI 6).
pub const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
pub const SCOPE_SIGNAL: u64 = 1 << 1;

const CREATE_RULESET_VERSION: u32 = 1;
const RULE_PATH_BENEATH: u32 = 1;

/// The rights a rule on a file (not a directory) may hold.
const FILE_RIGHTS: u64 = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV;

/// Read-only and executable: the system and Python directories.
pub const READ_EXEC: u64 = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR;
/// Read-only: the sandbox's own `/etc`.
pub const READ_ONLY: u64 = FS_READ_FILE | FS_READ_DIR;
/// A device file read and written (`/dev/null`).
pub const DEVICE_RW: u64 = FS_READ_FILE | FS_WRITE_FILE | FS_TRUNCATE;
/// A device file read (`/dev/urandom`).
pub const DEVICE_R: u64 = FS_READ_FILE;
/// The scratch directory: everything but device nodes.
pub const SCRATCH: u64 = FS_EXECUTE
    | FS_WRITE_FILE
    | FS_READ_FILE
    | FS_READ_DIR
    | FS_REMOVE_DIR
    | FS_REMOVE_FILE
    | FS_MAKE_DIR
    | FS_MAKE_REG
    | FS_MAKE_SOCK
    | FS_MAKE_FIFO
    | FS_MAKE_SYM
    | FS_REFER
    | FS_TRUNCATE;

/// The Landlock ABI version of the running kernel, or why there is none.
pub fn abi_version() -> Result<u32, String> {
    match sys::landlock_create_ruleset_version(CREATE_RULESET_VERSION) {
        Ok(v) if v >= 1 => Ok(v as u32),
        Ok(v) => Err(format!("the kernel reports Landlock ABI {v}")),
        Err(e) if e == Errno::NOSYS => {
            Err("the kernel has no Landlock (built without CONFIG_SECURITY_LANDLOCK)".into())
        }
        Err(e) if e == Errno::OPNOTSUPP => Err(
            "Landlock is built in but not enabled (add landlock to the lsm= boot parameter)".into(),
        ),
        Err(e) => Err(format!("asking for the Landlock ABI failed: {e}")),
    }
}

/// Filesystem rights this ABI knows (all of them are handled, so all are denied unless a rule
/// allows them).
pub fn handled_fs(abi: u32) -> u64 {
    let mut fs = (1 << 13) - 1;
    if abi >= 2 {
        fs |= FS_REFER;
    }
    if abi >= 3 {
        fs |= FS_TRUNCATE;
    }
    if abi >= 5 {
        fs |= FS_IOCTL_DEV;
    }
    fs
}

/// Network rights this ABI knows (none before ABI 4).
pub fn handled_net(abi: u32) -> u64 {
    if abi >= 4 {
        NET_BIND_TCP | NET_CONNECT_TCP
    } else {
        0
    }
}

/// Scopes this ABI knows (none before ABI 6).
pub fn scoped(abi: u32) -> u64 {
    if abi >= 6 {
        SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
    } else {
        0
    }
}

/// `struct landlock_ruleset_attr`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RulesetAttr {
    pub handled_access_fs: u64,
    pub handled_access_net: u64,
    pub scoped: u64,
}

/// `struct landlock_path_beneath_attr` (packed in the kernel's header).
#[repr(C, packed)]
#[derive(Debug, Clone, Copy)]
pub struct PathBeneathAttr {
    pub allowed_access: u64,
    pub parent_fd: i32,
}

/// One rule: a path in the sandbox's view and the rights beneath it.
#[derive(Debug)]
pub struct Rule {
    pub path: CString,
    pub access: u64,
    /// A file, not a directory: only file rights apply.
    pub file: bool,
}

/// Everything the sandbox's first process needs to restrict itself, made in the gate.
#[derive(Debug)]
pub struct LandlockPlan {
    pub attr: RulesetAttr,
    /// How many bytes of `attr` this ABI reads.
    pub attr_size: usize,
    pub rules: Vec<Rule>,
}

impl LandlockPlan {
    pub fn new(abi: u32, rules: Vec<Rule>) -> LandlockPlan {
        let handled = handled_fs(abi);
        let rules = rules
            .into_iter()
            .map(|mut r| {
                r.access &= handled;
                if r.file {
                    r.access &= FILE_RIGHTS;
                }
                r
            })
            .collect();
        let attr = RulesetAttr {
            handled_access_fs: handled,
            handled_access_net: handled_net(abi),
            scoped: scoped(abi),
        };
        let attr_size = if abi >= 6 {
            24
        } else if abi >= 4 {
            16
        } else {
            8
        };
        LandlockPlan {
            attr,
            attr_size,
            rules,
        }
    }

    /// Builds the ruleset and restricts the calling process (and all it starts). Sets
    /// no_new_privs first, as Landlock requires. Allocation-free: runs after the fork.
    pub fn restrict_self(&self) -> Result<(), Errno> {
        let ruleset = sys::landlock_create_ruleset(&self.attr, self.attr_size)?;
        for rule in &self.rules {
            let fd = sys::open_path(&rule.path)?;
            let attr = PathBeneathAttr {
                allowed_access: rule.access,
                parent_fd: fd,
            };
            let added = sys::landlock_add_rule(ruleset, RULE_PATH_BENEATH, &attr);
            sys::close(fd);
            added?;
        }
        rustix::thread::set_no_new_privs(true)?;
        let restricted = sys::landlock_restrict_self(ruleset);
        sys::close(ruleset);
        restricted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handled_rights_grow_with_the_abi() {
        assert_eq!(handled_fs(1), 0x1fff);
        assert_eq!(handled_fs(3) & FS_TRUNCATE, FS_TRUNCATE);
        assert_eq!(handled_net(3), 0);
        assert_eq!(handled_net(4), NET_BIND_TCP | NET_CONNECT_TCP);
        assert_eq!(scoped(5), 0);
        assert_eq!(scoped(6), SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET);
    }

    #[test]
    fn file_rules_keep_only_file_rights_and_known_rights() {
        let plan = LandlockPlan::new(
            1,
            vec![Rule {
                path: c"/dev/null".into(),
                access: DEVICE_RW | FS_READ_DIR,
                file: true,
            }],
        );
        assert_eq!(plan.rules[0].access, FS_READ_FILE | FS_WRITE_FILE);
        assert_eq!(plan.attr_size, 8);
    }

    #[test]
    fn path_beneath_attr_has_the_kernel_layout() {
        assert_eq!(std::mem::size_of::<PathBeneathAttr>(), 12);
        assert_eq!(std::mem::size_of::<RulesetAttr>(), 24);
    }
}
