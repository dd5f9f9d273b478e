//! `cuzk daemon` as a child process of a test: its configuration file,
//! waiting for its socket, stopping it with SIGTERM, and killing it if the
//! test fails before that.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

/// Asserts that a finished command exited with `code`, showing its output
/// if not.
pub fn assert_exit(o: &std::process::Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Kills the daemon if the test fails before stopping it.
pub struct Reap(pub Child);

impl Drop for Reap {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

impl Reap {
    /// Wait up to `limit` for the daemon's socket at `sock`, the daemon
    /// still running.
    pub fn wait_for_socket(&mut self, sock: &Path, limit: Duration) {
        let start = Instant::now();
        while !sock.exists() {
            assert!(
                start.elapsed() < limit,
                "daemon did not start: no socket at {}",
                sock.display()
            );
            assert!(self.0.try_wait().unwrap().is_none(), "daemon exited early");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Send SIGTERM and wait up to a minute for the daemon to exit; its
    /// exit status.
    pub fn terminate(&mut self) -> ExitStatus {
        let st = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
        let start = Instant::now();
        loop {
            if let Some(s) = self.0.try_wait().unwrap() {
                return s;
            }
            if start.elapsed() > Duration::from_secs(60) {
                let _ = self.0.kill();
                panic!("daemon did not exit after SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Write a daemon configuration to `cfg`: its socket `sock`, parameters in
/// `params`, a 256 MiB host budget, porep-like-6 as its only porep-like
/// kind, and `engine` (TOML lines) added to its `[engine]` table.
pub fn write_config(cfg: &Path, sock: &Path, params: &Path, engine: &str) {
    std::fs::write(
        cfg,
        format!(
            "[server]\nunix_socket = {sock:?}\n[engine]\nhost_memory_budget = \"256MiB\"\n{engine}\
             [params]\ndir = {params:?}\n[kinds]\nporep_like_log_sizes = [6]\n"
        ),
    )
    .unwrap();
}
