//! Where the gate listens: its unix socket in seam's home (owner-only), and
//! optionally a loopback TCP address.

use std::io::ErrorKind;
use std::net::SocketAddr;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::ServiceError;

/// The gate's socket, below seam's home.
pub const SOCKET_FILE: &str = seam_home::layout::GATE_SOCKET;

/// The path of the gate's socket in `seam_home`.
pub fn socket_path(seam_home: &Path) -> PathBuf {
    seam_home::SeamHome::new(seam_home).gate_socket()
}

/// The bound unix socket.
#[derive(Debug)]
pub(crate) struct BoundSocket {
    pub(crate) listener: tokio::net::UnixListener,
    pub(crate) file: SocketFile,
}

/// The socket's path, and which inode it is (to remove only our own).
#[derive(Debug)]
pub(crate) struct SocketFile {
    pub(crate) path: PathBuf,
    id: (u64, u64),
}

impl SocketFile {
    /// Removes the socket file if it is still the one we bound.
    pub(crate) fn remove(&self) {
        if let Ok(meta) = std::fs::symlink_metadata(&self.path)
            && (meta.dev(), meta.ino()) == self.id
        {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Binds `<seam_home>/gate.sock`, mode 0600.
///
/// An existing file there is handled first: a socket a gate answers on means
/// another gate is running (refused); a socket nobody answers on is stale
/// (removed); anything else is not ours to remove (refused). The socket is
/// bound inside a fresh 0700 directory, made 0600, and only then renamed into
/// place, so it is never reachable by others whatever the umask.
pub(crate) fn bind_socket(seam_home: &Path) -> Result<BoundSocket, ServiceError> {
    let path = socket_path(seam_home);
    clear_stale(&path)?;

    let private = seam_home.join(format!(".gate-bind-{}", std::process::id()));
    match std::fs::DirBuilder::new().mode(0o700).create(&private) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {
            // Left by a crashed gate that had our pid: must be a real directory.
            let meta = std::fs::symlink_metadata(&private)
                .map_err(|e| ServiceError::io("stat", &private, e))?;
            if !meta.is_dir() || meta.uid() != rustix::process::geteuid().as_raw() {
                return Err(ServiceError::io(
                    "use",
                    &private,
                    std::io::Error::new(ErrorKind::AlreadyExists, "not a directory of ours"),
                ));
            }
            std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| ServiceError::io("chmod", &private, e))?;
        }
        Err(e) => return Err(ServiceError::io("create", &private, e)),
    }
    let staged = private.join(SOCKET_FILE);
    let result = (|| {
        match std::fs::remove_file(&staged) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(ServiceError::io("remove", &staged, e)),
        }
        let listener =
            std::os::unix::net::UnixListener::bind(&staged).map_err(|e| ServiceError::Bind {
                what: format!("unix socket {}", staged.display()),
                source: e,
            })?;
        std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| ServiceError::io("chmod", &staged, e))?;
        std::fs::rename(&staged, &path)
            .map_err(|e| ServiceError::io("move into place", &path, e))?;
        Ok(listener)
    })();
    let _ = std::fs::remove_file(&staged);
    let _ = std::fs::remove_dir(&private);
    let listener = result?;

    let meta = std::fs::symlink_metadata(&path).map_err(|e| ServiceError::io("stat", &path, e))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| ServiceError::io("configure", &path, e))?;
    let listener = tokio::net::UnixListener::from_std(listener)
        .map_err(|e| ServiceError::io("register", &path, e))?;
    Ok(BoundSocket {
        listener,
        file: SocketFile {
            path,
            id: (meta.dev(), meta.ino()),
        },
    })
}

fn clear_stale(path: &Path) -> Result<(), ServiceError> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(ServiceError::io("stat", path, e)),
    };
    if !meta.file_type().is_socket() {
        return Err(ServiceError::NotASocket {
            path: path.to_path_buf(),
        });
    }
    match std::os::unix::net::UnixStream::connect(path) {
        Ok(_) => Err(ServiceError::AlreadyListening {
            path: path.to_path_buf(),
        }),
        Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
            std::fs::remove_file(path).map_err(|e| ServiceError::io("remove stale", path, e))
        }
        Err(e) => Err(ServiceError::io("probe", path, e)),
    }
}

/// Binds the TCP listener: a loopback address, or any address when the
/// operator said `allow_non_loopback`.
pub(crate) async fn bind_tcp(
    addr: SocketAddr,
    allow_non_loopback: bool,
) -> Result<tokio::net::TcpListener, ServiceError> {
    if !addr.ip().is_loopback() && !allow_non_loopback {
        return Err(ServiceError::NonLoopback { addr });
    }
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| ServiceError::Bind {
            what: format!("tcp {addr}"),
            source: e,
        })
}

/// The unix listener, admitting only connections from this user (checked by
/// the kernel's peer credentials), on top of the socket's 0600 mode.
#[derive(Debug)]
pub(crate) struct OwnerOnly {
    pub(crate) inner: tokio::net::UnixListener,
    pub(crate) uid: u32,
}

/// A connection's peer on the unix socket, as the kernel's peer credentials say (checked to
/// be the gate's own user on accept). Handlers get it as `ConnectInfo<PeerUid>`; on the TCP
/// listener there is none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PeerUid(pub(crate) u32);

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, OwnerOnly>>
    for PeerUid
{
    fn connect_info(stream: axum::serve::IncomingStream<'_, OwnerOnly>) -> Self {
        *stream.remote_addr()
    }
}

impl axum::serve::Listener for OwnerOnly {
    type Io = tokio::net::UnixStream;
    type Addr = PeerUid;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.inner.accept().await {
                Ok((io, _addr)) => match io.peer_cred() {
                    Ok(cred) if cred.uid() == self.uid => return (io, PeerUid(cred.uid())),
                    // Another user (a root-owned process counts as another):
                    // dropped unanswered.
                    _ => continue,
                },
                // Out of file descriptors and the like: wait rather than spin.
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(PeerUid(self.uid))
    }
}
