//! Kernel walls for untrusted code: namespaces, Landlock, seccomp, rlimits.
