//! Standard output with a closed pipe as a typed error: `dbrig report … | head -1` ends
//! quietly with the exit status a shell gives a process killed by SIGPIPE (141), as
//! `yes | head -1` does. (Rust ignores SIGPIPE, so a write to a closed pipe is an `EPIPE`
//! error: [`ClosedPipe`] carries it up to `main`.)

use std::io::Write;

/// Standard output's reader is gone.
#[derive(Debug, thiserror::Error)]
#[error("standard output is closed")]
pub struct ClosedPipe;

/// Exit status when stdout is a closed pipe: what a shell reports for a process ended by
/// SIGPIPE (128 + 13).
pub const EXIT_BROKEN_PIPE: u8 = 141;

/// Write `text` to stdout as it is.
pub fn text(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(ClosedPipe.into()),
        Err(e) => Err(anyhow::Error::new(e).context("writing to standard output")),
    }
}

/// `println!` that returns [`ClosedPipe`] instead of panicking.
macro_rules! outln {
    () => {
        $crate::out::text("\n")
    };
    ($($t:tt)*) => {
        $crate::out::text(&format!("{}\n", format_args!($($t)*)))
    };
}
pub(crate) use outln;
