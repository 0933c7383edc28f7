//! Reading files a user names (`--matrix`, a `--patch` directory's
//! `Cargo.toml`): only regular files, opened without waiting, so that a
//! FIFO or a device is refused at once instead of blocking the runner where
//! no signal can stop it.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The text of `path`, which must be a regular file (a link to one is fine).
pub fn read_regular(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, a device or a directory)",
        ));
    }
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 42 (13): a FIFO `--matrix` blocked the runner on its read.
    #[test]
    fn a_fifo_is_refused_at_once_and_a_file_is_read() {
        let dir = std::env::temp_dir().join(format!("dbus-matrix-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("matrix.toml");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let started = std::time::Instant::now();
        let err = read_regular(&fifo).expect_err("a FIFO was read");
        assert!(err.to_string().contains("not a regular file"), "{err}");
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        assert!(read_regular(&dir).is_err());
        let file = dir.join("m.toml");
        std::fs::write(&file, "x = 1\n").unwrap();
        assert_eq!(read_regular(&file).unwrap(), "x = 1\n");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
