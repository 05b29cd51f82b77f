//! The local files pxfa reads and writes, treated as the admin's input and pxfa's
//! own output, never as something a file system trick can redirect.
//!
//! | rule | why |
//! |---|---|
//! | an input is opened non-blocking and must be a regular file or a pipe | a FIFO with no writer blocked `open` forever; `/dev/zero` never ends |
//! | an input is read up to its kind's cap, one byte more tells it is too large | a huge or endless file exhausted memory (4 GB in 3 s) |
//! | a pipe (`<(cmd)`) is read for at most `PIPE_DEADLINE` | a writer that never writes must not hang pxfa |
//! | a folder pxfa writes into is a real folder owned by the user running pxfa | a symlinked `OUT/.pxfa` sent the token journal elsewhere |
//! | pxfa sets the mode only of a folder it creates | it must never chmod somebody else's folder |
//! | a file is created with `O_NOFOLLOW` and `O_EXCL` | a planted symlink at a temporary name would be followed |
//! | state and journal are locked ([`FileLock`]) for a whole command | two runs on one file lost each other's writes |

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How much of each kind of input pxfa reads at most. A real file of each kind is
/// far smaller; the cap only stops a wrong or hostile one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// An API token file (a UUID or a JWT, one line).
    Token,
    /// A `pure.json`, a CA bundle, a pull secret.
    Credentials,
    /// A TenantStorage spec or a manifest pxfa lints.
    Spec,
    /// A kubeconfig (may embed certificates of many clusters).
    Kubeconfig,
    /// The simulator's saved state (every object of an array).
    SimState,
}

impl InputKind {
    /// The largest file of this kind pxfa reads, in bytes.
    pub const fn max_bytes(self) -> u64 {
        match self {
            InputKind::Token => 64 << 10,
            InputKind::Credentials => 1 << 20,
            InputKind::Spec => MAX_SPEC_BYTES as u64,
            InputKind::Kubeconfig => 16 << 20,
            InputKind::SimState => 512 << 20,
        }
    }
}

/// Largest spec file read, in bytes. The largest valid spec (500 management nodes
/// with a few initiators each) is well under 1 MiB; refusing more before parsing
/// keeps a wrong file (a disk image, a log) from costing memory.
pub(crate) const MAX_SPEC_BYTES: usize = 4 * 1024 * 1024;

/// How long pxfa waits for a pipe's writer to finish (`--api-token-file <(cmd)`).
pub(crate) const PIPE_DEADLINE: Duration = Duration::from_secs(5);

/// Why a local file cannot be used. The message never quotes the file's content.
#[derive(Debug)]
pub enum FileError {
    /// The operating system's error (missing file, no permission, ...).
    Io(io::Error),
    /// A device, socket or folder where a file was expected.
    NotAFile(&'static str),
    /// Larger than its kind may be.
    TooLarge(u64),
    /// A pipe whose writer did not finish in time.
    PipeTimeout,
    /// A symbolic link where pxfa writes.
    Symlink,
    /// Not a folder where pxfa writes a folder.
    NotAFolder,
    /// A folder or file owned by another user.
    ForeignOwner(u32),
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileError::Io(e) => write!(f, "{e}"),
            FileError::NotAFile(what) => write!(f, "is {what}, not a regular file"),
            FileError::TooLarge(max) => write!(
                f,
                "is larger than {} KiB, more than a file of this kind can hold",
                max >> 10
            ),
            FileError::PipeTimeout => write!(
                f,
                "is a pipe whose writer did not finish within {} s",
                PIPE_DEADLINE.as_secs()
            ),
            FileError::Symlink => write!(
                f,
                "is a symbolic link; pxfa does not write through links (give the real path)"
            ),
            FileError::NotAFolder => write!(f, "exists and is not a folder"),
            FileError::ForeignOwner(uid) => write!(
                f,
                "is owned by uid {uid}, not by the user running pxfa; pxfa writes only into its own folders"
            ),
        }
    }
}

impl std::error::Error for FileError {}

impl From<io::Error> for FileError {
    fn from(e: io::Error) -> Self {
        FileError::Io(e)
    }
}

/// Reads an input file of `kind`: opened non-blocking, refused when it is not a
/// regular file or a pipe, and read up to the kind's cap.
pub fn read_input(path: &Path, kind: InputKind) -> Result<Vec<u8>, FileError> {
    let file = open_nonblocking(path)?;
    let meta = file.metadata()?;
    let max = kind.max_bytes();
    let ty = meta.file_type();
    if ty.is_file() {
        if meta.len() > max {
            return Err(FileError::TooLarge(max));
        }
        // Blocking again is harmless for a regular file; the length may still grow
        // while reading, hence the capped read.
        return read_capped(file, max);
    }
    if is_pipe(&ty) {
        return read_pipe(file, max);
    }
    Err(FileError::NotAFile(describe(&ty)))
}

/// [`read_input`] as UTF-8 text.
pub fn read_input_text(path: &Path, kind: InputKind) -> Result<String, FileError> {
    String::from_utf8(read_input(path, kind)?).map_err(|_| {
        FileError::Io(io::Error::new(
            io::ErrorKind::InvalidData,
            "is not UTF-8 text",
        ))
    })
}

fn open_nonblocking(path: &Path) -> io::Result<File> {
    let mut opts = OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // O_NONBLOCK: opening a FIFO with no writer returns at once; O_NOCTTY: a
        // terminal device never becomes the controlling terminal.
        opts.custom_flags(
            (rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY).bits() as i32,
        );
    }
    opts.open(path)
}

fn read_capped(file: File, max: u64) -> Result<Vec<u8>, FileError> {
    let mut buf = Vec::new();
    file.take(max + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > max {
        return Err(FileError::TooLarge(max));
    }
    Ok(buf)
}

/// A pipe opened non-blocking: reads what the writer sends until it closes, with a
/// deadline. With no writer at all, the first read is the end of the file.
fn read_pipe(mut file: File, max: u64) -> Result<Vec<u8>, FileError> {
    let start = Instant::now();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        match file.read(&mut chunk) {
            Ok(0) => return Ok(buf),
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                if buf.len() as u64 > max {
                    return Err(FileError::TooLarge(max));
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if start.elapsed() > PIPE_DEADLINE {
                    return Err(FileError::PipeTimeout);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
}

#[cfg(unix)]
fn is_pipe(ty: &fs::FileType) -> bool {
    use std::os::unix::fs::FileTypeExt;
    ty.is_fifo()
}

#[cfg(not(unix))]
fn is_pipe(_ty: &fs::FileType) -> bool {
    false
}

fn describe(ty: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ty.is_char_device() || ty.is_block_device() {
            return "a device";
        }
        if ty.is_socket() {
            return "a socket";
        }
    }
    if ty.is_dir() {
        return "a folder";
    }
    "not a regular file"
}

/// The user running pxfa (its effective uid).
#[cfg(unix)]
fn my_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// Checks a path pxfa is about to write into as a folder, without changing it:
/// absent is fine (pxfa will create it), present must be a real folder owned by the
/// user running pxfa. Returns whether it exists.
pub fn check_own_dir(path: &Path) -> Result<bool, FileError> {
    let meta = match fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e.into()),
    };
    if meta.file_type().is_symlink() {
        return Err(FileError::Symlink);
    }
    if !meta.is_dir() {
        return Err(FileError::NotAFolder);
    }
    check_owner(&meta)?;
    Ok(true)
}

#[cfg(unix)]
fn check_owner(meta: &fs::Metadata) -> Result<(), FileError> {
    use std::os::unix::fs::MetadataExt;
    if meta.uid() != my_uid() {
        return Err(FileError::ForeignOwner(meta.uid()));
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_owner(_meta: &fs::Metadata) -> Result<(), FileError> {
    Ok(())
}

/// Makes sure `path` is a folder pxfa may write into: an existing one passes
/// [`check_own_dir`] and keeps its mode; a missing one is created (with its
/// parents) with `mode`. Returns whether pxfa created it.
pub fn ensure_own_dir(path: &Path, mode: u32) -> Result<bool, FileError> {
    if check_own_dir(path)? {
        return Ok(false);
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)?;
    }
    let mut b = fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    match b.create(path) {
        Ok(()) => {}
        // Another process made it in between: it must pass the same checks.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            check_own_dir(path)?;
            return Ok(false);
        }
        Err(e) => return Err(e.into()),
    }
    // The umask may have narrowed `mode`; for a folder pxfa made, set it exactly.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(mode))?;
    }
    Ok(true)
}

/// Creates a new file at `path` for writing: never through a symbolic link and
/// never over an existing file (`O_EXCL`), with `mode`. A leftover at `path` (a
/// temporary file of a killed run, or a planted link) is removed first: removing a
/// link removes the link, not its target.
pub fn create_new_file(path: &Path, mode: u32) -> io::Result<File> {
    match fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut opts = OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(mode);
        opts.custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    }
    #[cfg(not(unix))]
    let _ = mode;
    opts.open(path)
}

/// Writes `bytes` to `path` with `mode` through a new temporary file beside it
/// ([`create_new_file`]) renamed over `path`: a reader sees the old file or the new
/// one, never half of one, and a link at `path` is replaced, not followed. With
/// `durable`, the data and the folder entry are synced before returning, for a file
/// that may be the only copy of a secret.
pub fn write_replacing(path: &Path, bytes: &[u8], mode: u32, durable: bool) -> io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file path"))?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut f = create_new_file(&tmp, mode)?;
        io::Write::write_all(&mut f, bytes)?;
        if durable {
            f.sync_all()?;
        }
        fs::rename(&tmp, path)?;
        // The rename is durable only once the folder's entry is on disk.
        #[cfg(unix)]
        if durable {
            File::open(dir)?.sync_all()?;
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// The permission problems of a file holding a secret, as warnings: the file
/// readable by group or others, or its folder writable by them (anyone could then
/// replace the file). Nothing is changed.
pub fn loose_permissions(path: &Path) -> Vec<String> {
    let mut out = Vec::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = fs::metadata(path) {
            let mode = meta.permissions().mode();
            if meta.is_file() && mode & 0o077 != 0 {
                out.push(format!(
                    "{} holds a secret but is readable by group or others (mode {:o}); run chmod 600 {}",
                    path.display(),
                    mode & 0o777,
                    path.display()
                ));
            }
        }
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if let Ok(meta) = fs::metadata(&dir) {
            let mode = meta.permissions().mode();
            // The sticky bit (like /tmp) stops others from replacing the file.
            if mode & 0o022 != 0 && mode & 0o1000 == 0 {
                out.push(format!(
                    "the folder {} of {} is writable by group or others (mode {:o}): anyone \
                     could replace the file; keep secrets in a private folder",
                    dir.display(),
                    path.display(),
                    mode & 0o7777
                ));
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    out
}

/// An advisory lock on `<file>.lock` beside a file, held for as long as the value
/// lives, so two pxfa processes never read-modify-write the same file at once. The
/// lock file is never removed: removing it would let a third process lock a new
/// file while the second still holds the old one.
#[derive(Debug)]
pub struct FileLock {
    _file: File,
    path: PathBuf,
}

/// How long [`FileLock::acquire`] waits for another process before it gives up.
pub const LOCK_WAIT: Duration = Duration::from_secs(120);

impl FileLock {
    /// The lock file guarding `target`.
    pub fn path_for(target: &Path) -> PathBuf {
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        target.with_file_name(format!(".{name}.lock"))
    }

    /// Takes the lock guarding `target`, waiting up to `wait` for another process
    /// (`on_wait` is called once when it has to wait). The lock file is created
    /// with mode 0600, never through a link.
    pub fn acquire(
        target: &Path,
        wait: Duration,
        on_wait: &mut dyn FnMut(&Path),
    ) -> Result<FileLock, LockError> {
        let path = Self::path_for(target);
        let file = open_lock_file(&path).map_err(|e| LockError::Open(path.clone(), e))?;
        let start = Instant::now();
        let mut told = false;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(FileLock { _file: file, path }),
                Err(fs::TryLockError::WouldBlock) => {
                    if !told {
                        on_wait(&path);
                        told = true;
                    }
                    if start.elapsed() >= wait {
                        return Err(LockError::Busy(path));
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(fs::TryLockError::Error(e)) => return Err(LockError::Open(path, e)),
            }
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn open_lock_file(path: &Path) -> io::Result<File> {
    let mut opts = OpenOptions::new();
    opts.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
        opts.custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    }
    let file = opts.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other("the lock file is not a regular file"));
    }
    Ok(file)
}

/// Why a [`FileLock`] could not be taken.
#[derive(Debug)]
pub enum LockError {
    /// The lock file cannot be opened or created (a missing folder, a link).
    Open(PathBuf, io::Error),
    /// Another process held the lock for longer than the wait.
    Busy(PathBuf),
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockError::Open(p, e) => write!(f, "cannot open the lock file {}: {e}", p.display()),
            LockError::Busy(p) => write!(
                f,
                "another pxfa process holds {} (waited {} s); try again when it has finished",
                p.display(),
                LOCK_WAIT.as_secs()
            ),
        }
    }
}

impl std::error::Error for LockError {}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn devices_and_fifos_do_not_block_or_exhaust_memory() {
        let err = read_input(Path::new("/dev/zero"), InputKind::Token).unwrap_err();
        assert!(matches!(err, FileError::NotAFile("a device")), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        // No writer: the read ends at once with an empty file.
        let start = Instant::now();
        assert_eq!(read_input(&fifo, InputKind::Token).unwrap(), b"");
        assert!(start.elapsed() < Duration::from_secs(2));
        let err = read_input(dir.path(), InputKind::Spec).unwrap_err();
        assert!(matches!(err, FileError::NotAFile("a folder")), "{err}");
    }

    #[test]
    fn huge_files_are_refused_before_reading() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("big");
        // Sparse: costs no disk.
        File::create(&f).unwrap().set_len(8 << 30).unwrap();
        let err = read_input(&f, InputKind::SimState).unwrap_err();
        assert!(matches!(err, FileError::TooLarge(_)), "{err}");
        fs::write(&f, vec![b'a'; (64 << 10) + 1]).unwrap();
        assert!(read_input(&f, InputKind::Token).is_err());
        fs::write(&f, vec![b'a'; 64 << 10]).unwrap();
        assert_eq!(read_input(&f, InputKind::Token).unwrap().len(), 64 << 10);
    }

    #[test]
    fn links_and_files_in_place_of_folders_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        fs::create_dir(&target).unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o755)).unwrap();
        let link = dir.path().join("out");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(matches!(
            ensure_own_dir(&link, 0o700),
            Err(FileError::Symlink)
        ));
        let mode = fs::metadata(&target).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o755, "the link's target keeps its mode");
        let file = dir.path().join("file");
        fs::write(&file, "x").unwrap();
        assert!(matches!(
            ensure_own_dir(&file, 0o700),
            Err(FileError::NotAFolder)
        ));
        let fresh = dir.path().join("a/b");
        assert!(ensure_own_dir(&fresh, 0o700).unwrap());
        assert_eq!(
            fs::metadata(&fresh).unwrap().permissions().mode() & 0o777,
            0o700
        );
        // An existing folder is not chmodded.
        fs::set_permissions(&fresh, fs::Permissions::from_mode(0o750)).unwrap();
        assert!(!ensure_own_dir(&fresh, 0o700).unwrap());
        assert_eq!(
            fs::metadata(&fresh).unwrap().permissions().mode() & 0o777,
            0o750
        );
    }

    #[test]
    fn another_users_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let theirs = dir.path().join("theirs");
        fs::create_dir(&theirs).unwrap();
        let other = if my_uid() == 4242 { 4243 } else { 4242 };
        if std::os::unix::fs::chown(&theirs, Some(other), None).is_err() {
            eprintln!("NOTICE: not root, cannot give a folder to another user; case skipped");
            return;
        }
        assert!(matches!(
            ensure_own_dir(&theirs, 0o700),
            Err(FileError::ForeignOwner(uid)) if uid == other
        ));
    }

    #[test]
    fn new_files_replace_a_planted_link_not_its_target() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "keep").unwrap();
        let tmp = dir.path().join(".x.tmp");
        std::os::unix::fs::symlink(&victim, &tmp).unwrap();
        drop(create_new_file(&tmp, 0o600).unwrap());
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep");
        assert!(fs::symlink_metadata(&tmp).unwrap().is_file());
    }

    #[test]
    fn a_second_lock_waits_then_refuses() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state.json");
        let first = FileLock::acquire(&state, LOCK_WAIT, &mut |_| {}).unwrap();
        let mut waited = false;
        let err = FileLock::acquire(&state, Duration::from_millis(100), &mut |_| waited = true)
            .unwrap_err();
        assert!(waited);
        assert!(matches!(err, LockError::Busy(_)), "{err}");
        drop(first);
        FileLock::acquire(&state, Duration::ZERO, &mut |_| {}).unwrap();
        let missing = dir.path().join("no/such/state.json");
        assert!(matches!(
            FileLock::acquire(&missing, Duration::ZERO, &mut |_| {}),
            Err(LockError::Open(..))
        ));
    }

    #[test]
    fn loose_secrets_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("tok");
        fs::write(&f, "t").unwrap();
        fs::set_permissions(&f, fs::Permissions::from_mode(0o600)).unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o700)).unwrap();
        assert!(loose_permissions(&f).is_empty());
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o777)).unwrap();
        assert_eq!(loose_permissions(&f).len(), 1);
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o1777)).unwrap();
        assert!(loose_permissions(&f).is_empty());
        fs::set_permissions(&f, fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(loose_permissions(&f).len(), 1);
    }
}
