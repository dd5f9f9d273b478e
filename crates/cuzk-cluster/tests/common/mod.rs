//! Test databases on a real PostgreSQL: the server named by
//! `CUZK_TEST_DATABASE_URL`, or one started by scripts/pg-test-server.sh for
//! this test binary (stopped by the script's watcher when the binary exits).
//! Each test gets its own database, dropped at the end, so tests run in
//! parallel. A server that cannot be had fails the test, never skips it.

#![allow(dead_code)]

use cuzk_cluster::{ClusterClient, ClusterConfig};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../scripts/pg-test-server.sh"
);

/// A server started by the script.
pub struct Server {
    pub url: String,
    pub dir: String,
}

impl Server {
    /// Start a server owned by this process (the script's watcher stops it
    /// when the process exits, even if `stop` is never called).
    pub fn start() -> Result<Server, String> {
        let out = Command::new("bash")
            .arg(SCRIPT)
            .arg("start")
            .arg("--owner-pid")
            .arg(std::process::id().to_string())
            .output()
            .map_err(|e| format!("cannot run {SCRIPT}: {e}"))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let field = |k: &str| {
            stdout
                .lines()
                .find_map(|l| l.strip_prefix(k).map(str::to_owned))
        };
        match (out.status.success(), field("URL="), field("DIR=")) {
            (true, Some(url), Some(dir)) => Ok(Server { url, dir }),
            _ => Err(format!(
                "{SCRIPT} start failed ({}): {}{}",
                out.status,
                stdout,
                String::from_utf8_lossy(&out.stderr)
            )),
        }
    }

    /// Fast restart: every connection is dropped.
    pub fn restart(&self) {
        let st = Command::new("bash")
            .arg(SCRIPT)
            .arg("restart")
            .arg(&self.dir)
            .status()
            .expect("run pg-test-server.sh restart");
        assert!(st.success(), "pg-test-server.sh restart failed: {st}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(SCRIPT)
            .arg("stop")
            .arg(&self.dir)
            .status();
    }
}

fn shared_server_url() -> &'static str {
    static URL: OnceLock<Result<String, String>> = OnceLock::new();
    let r = URL.get_or_init(|| {
        if let Ok(u) = std::env::var("CUZK_TEST_DATABASE_URL") {
            if !u.is_empty() {
                return Ok(u);
            }
        }
        // Leaked on purpose: the server lives as long as the test binary,
        // and the script's watcher stops it after.
        Server::start().map(|s| {
            let url = s.url.clone();
            std::mem::forget(s);
            url
        })
    });
    match r {
        Ok(u) => u,
        Err(e) => panic!(
            "no PostgreSQL for the cuzk-cluster tests: {e}\n\
             Set CUZK_TEST_DATABASE_URL to a server where this user may CREATE DATABASE, \
             or install PostgreSQL (Debian: apt-get install postgresql)"
        ),
    }
}

/// `url` with its database replaced by `db`.
pub fn with_database(url: &str, db: &str) -> String {
    let scheme_end = url.find("://").map(|i| i + 3).expect("a postgres:// URL");
    let (head, rest) = url.split_at(scheme_end);
    let (authority, tail) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let query = tail.find('?').map(|i| &tail[i..]).unwrap_or("");
    format!("{head}{authority}/{db}{query}")
}

async fn admin_execute(url: &str, sql: &str) {
    let (c, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("connect to the test server {url}: {e}"));
    let h = tokio::spawn(conn);
    c.batch_execute(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    drop(c);
    let _ = h.await;
}

/// A database of its own for one test, on the shared server or on `server`.
pub struct TestDb {
    pub url: String,
    admin_url: String,
    name: String,
}

impl TestDb {
    pub async fn new() -> TestDb {
        Self::on(shared_server_url()).await
    }

    pub async fn on(admin_url: &str) -> TestDb {
        static N: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "cuzk_test_{}_{}_{:08x}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed),
            rand::random::<u32>()
        );
        admin_execute(admin_url, &format!("CREATE DATABASE {name}")).await;
        TestDb {
            url: with_database(admin_url, &name),
            admin_url: admin_url.to_owned(),
            name,
        }
    }

    pub fn config(&self, node: &str) -> ClusterConfig {
        let mut c = ClusterConfig::new(self.url.clone(), node);
        c.lease_ttl = Duration::from_secs(30);
        c.reconnect_for = Duration::from_secs(60);
        c
    }

    pub fn client(&self, node: &str) -> ClusterClient {
        ClusterClient::new(self.config(node)).expect("valid config")
    }

    /// A client whose schema is migrated.
    pub async fn node(&self, node: &str) -> ClusterClient {
        let c = self.client(node);
        c.migrate().await.expect("migrate");
        c
    }

    /// A plain connection for checks the API does not offer.
    pub async fn raw(&self) -> tokio_postgres::Client {
        let (c, conn) = tokio_postgres::connect(&self.url, tokio_postgres::NoTls)
            .await
            .expect("connect to the test database");
        tokio::spawn(conn);
        c
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let admin = self.admin_url.clone();
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        // Drop runs inside the test's runtime; a runtime of its own on
        // another thread can block on the drop.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                if let Ok((c, conn)) = tokio_postgres::connect(&admin, tokio_postgres::NoTls).await
                {
                    let h = tokio::spawn(conn);
                    let _ = c.batch_execute(&sql).await;
                    drop(c);
                    let _ = h.await;
                }
            });
        })
        .join();
    }
}

/// The stand-in proof of a partition: 192 bytes that depend on the job, the
/// partition and who proved it.
pub fn fake_proof(job: i64, idx: u32, salt: u8) -> Vec<u8> {
    let mut x = (job as u64) << 20 ^ u64::from(idx) << 4 ^ u64::from(salt);
    (0..192)
        .map(|_| {
            // splitmix64
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) as u8
        })
        .collect()
}
