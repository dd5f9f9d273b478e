//! The status page (`/`) in headless Chromium against a running daemon:
//! jobs proved on the CPU backend (and on a stand-in for two GPUs), the
//! page loaded with the token, and the figures each plot writes as data
//! attributes compared with what `/status` says: completed jobs and proofs
//! in the proofs-per-minute bars, one row per worker with busy time drawn,
//! four priorities, the jobs listed, the GPUs' VRAM (or the note that
//! there is no GPU). Without the token the page asks for it. A screenshot
//! of each is kept under the target dir's tmp folder (printed).
//!
//! Chromium is Debian's `chromium` package, installed by
//! scripts/install-chromium.sh (which scripts/test.sh runs); without it
//! these tests fail, saying so.

mod common;

use common::*;
use cuzk_core::params::Parameters;
use cuzk_core::prover::{CpuBackend, ProverBackend};
use cuzk_daemon::devices::{DeviceBackend, DeviceError, DeviceInfo, ResidentParams};
use cuzk_daemon::proto::Priority as P;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A browser run longer than this is killed and the test fails.
const BROWSER_LIMIT: Duration = Duration::from_secs(120);

fn chromium() -> PathBuf {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("CUZK_CHROMIUM") {
        candidates.push(p.into());
    }
    candidates.push("/usr/bin/chromium".into());
    candidates.push("/usr/bin/chromium-browser".into());
    if let Some(path) = std::env::var_os("PATH") {
        for d in std::env::split_paths(&path) {
            candidates.push(d.join("chromium"));
        }
    }
    candidates
        .into_iter()
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "Chromium not found (CUZK_CHROMIUM, /usr/bin/chromium, chromium on PATH): \
                 the status page test needs it; install it with scripts/install-chromium.sh \
                 (as root; scripts/test.sh runs it), i.e. Debian's chromium package"
            )
        })
}

/// Run headless Chromium on `url` with `args`; returns its stdout. Its
/// profile, cache and HOME are a fresh temp dir, removed afterwards.
fn browse(url: &str, args: &[&str]) -> String {
    let bin = chromium();
    let profile = tempfile::tempdir().unwrap();
    let mut child = Command::new(&bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            "--window-size=1400,1500",
            // Virtual time runs ahead while nothing is loading: the page's
            // first fetch and drawing finish within it.
            "--virtual-time-budget=8000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(url)
        .env("HOME", profile.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e}", bin.display()));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > BROWSER_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("Chromium still running after {BROWSER_LIMIT:?} on {url}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        status.success(),
        "Chromium failed ({status}) on {url}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The page after its first drawing, as Chromium serializes its DOM.
async fn dom(url: String) -> String {
    tokio::task::spawn_blocking(move || browse(&url, &["--dump-dom"]))
        .await
        .unwrap()
}

/// A screenshot of the page, kept as the run's artifact; returns its path.
async fn screenshot(url: String, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("status-page");
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join(name);
    let _ = std::fs::remove_file(&png);
    let arg = format!("--screenshot={}", png.display());
    tokio::task::spawn_blocking(move || browse(&url, &[&arg]))
        .await
        .unwrap();
    let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("{}: {e}", png.display()));
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000,
        "{}: not a screenshot of a drawn page ({} bytes)",
        png.display(),
        bytes.len()
    );
    println!("status page screenshot: {}", png.display());
    png
}

/// The start tag of the element with `id`.
fn tag<'a>(dom: &'a str, id: &str) -> &'a str {
    let at = dom
        .find(&format!(" id=\"{id}\""))
        .unwrap_or_else(|| panic!("no element #{id} in the page"));
    let start = dom[..at].rfind('<').unwrap();
    let end = at + dom[at..].find('>').unwrap();
    &dom[start..=end]
}

/// Attribute `name` of the element with `id`.
fn attr(dom: &str, id: &str, name: &str) -> String {
    let t = tag(dom, id);
    let key = format!(" {name}=\"");
    let at = t
        .find(&key)
        .unwrap_or_else(|| panic!("#{id} has no {name}: {t}"))
        + key.len();
    t[at..at + t[at..].find('"').unwrap()].to_owned()
}

fn num(dom: &str, id: &str, name: &str) -> f64 {
    let v = attr(dom, id, name);
    v.parse()
        .unwrap_or_else(|_| panic!("#{id} {name}={v:?} is not a number"))
}

/// The text inside the element with `id` (up to its first child tag).
fn text<'a>(dom: &'a str, id: &str) -> &'a str {
    let t = tag(dom, id);
    let at = dom.find(t).unwrap() + t.len();
    &dom[at..at + dom[at..].find('<').unwrap()]
}

async fn status_json(addr: std::net::SocketAddr) -> serde_json::Value {
    let (code, body) = http_get(addr, "/status", Some(TOKEN)).await;
    assert_eq!(code, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

/// Prove `jobs` (log size, seed, partitions, priority) and wait for them.
async fn prove_all(t: &TestDaemon, jobs: &[(u32, u64, u32, P)]) {
    let mut c = t.unix().await;
    let mut ids = Vec::new();
    for &(log, seed, parts, p) in jobs {
        let id = submit_id(&mut c, req(log, seed, parts, p)).await;
        ids.push(id);
    }
    for id in ids {
        let r = await_done(&mut c, id).await;
        assert_eq!(
            r.state,
            cuzk_daemon::proto::JobState::Completed as i32,
            "{}",
            r.error
        );
    }
}

/// What every loaded page must show, compared with `/status`.
fn check_page(dom: &str, st: &serde_json::Value, jobs: usize) {
    assert_eq!(
        attr(dom, "page", "data-ready"),
        "1",
        "the page drew nothing"
    );
    let completed = st["counters"]["completed"].as_u64().unwrap();
    let proofs = st["counters"]["circuits_proved"].as_u64().unwrap();
    let workers = st["workers"].as_u64().unwrap();
    assert_eq!(completed, jobs as u64);
    // The proofs-per-minute bars add up to what the daemon proved.
    assert_eq!(num(dom, "rate", "data-completed"), completed as f64);
    assert_eq!(num(dom, "rate", "data-proofs"), proofs as f64);
    assert!(num(dom, "rate", "data-max") >= 1.0, "no bar drawn");
    // A daemon minutes old: the plots span its history, not the hour.
    assert_eq!(num(dom, "page", "data-span-min"), 1.0);
    assert_eq!(num(dom, "rate", "data-bins"), 30.0, "2 s bars over 1 min");
    assert!(text(dom, "span").contains("1 min"), "{}", text(dom, "span"));
    assert_eq!(text(dom, "completed"), completed.to_string());
    assert_eq!(text(dom, "proofs"), proofs.to_string());
    // One row per worker, and the busy time they proved in drawn.
    assert_eq!(num(dom, "busy", "data-workers"), workers as f64);
    assert_eq!(text(dom, "workers"), workers.to_string());
    assert!(num(dom, "busy", "data-busy") > 0.0, "no busy time drawn");
    // A queue line per priority, over the samples of the ring.
    assert_eq!(num(dom, "queue", "data-series"), 4.0);
    let samples = num(dom, "page", "data-samples");
    assert!(samples >= 3.0, "{samples} samples");
    // It polled again and again, the later polls asking only for the new
    // samples (?since=), and kept them in order, none twice.
    assert!(num(dom, "page", "data-polls") >= 2.0);
    assert_eq!(attr(dom, "page", "data-ordered"), "1");
    assert_eq!(num(dom, "queue", "data-points"), samples);
    assert_eq!(num(dom, "busy", "data-points"), samples);
    // The tiers held in memory and synthesis's reservation.
    assert_eq!(num(dom, "memory", "data-series"), 4.0);
    assert!(num(dom, "memory", "data-peak") > 0.0, "no memory use drawn");
    // The jobs with their phases, newest first.
    assert_eq!(num(dom, "jobs", "data-jobs"), jobs as f64);
    assert!(dom.contains("porep-like-6"));
    assert!(dom.contains("class=\"st-completed\""));
    assert_eq!(
        dom.matches("<title>prove ").count(),
        jobs,
        "a prove phase per job"
    );
    assert!(
        !dom.contains("data-error="),
        "the page saw an error: {}",
        attr(dom, "page", "data-error")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_status_page_plots_the_daemons_last_hour_on_the_cpu() {
    // First: without a browser this test cannot pass.
    chromium();
    let t = TestDaemon::start(|c| {
        c.engine.cpu_workers = 2;
        c.server.status_sample_interval_ms = 250;
    })
    .await;
    let http = t.daemon().http_addr.unwrap();

    // The page holds no data: served without the token, nothing external.
    let (code, page) = http_get(http, "/", None).await;
    assert_eq!(code, 200);
    assert!(page.contains("<svg id=\"rate\""));
    for external in ["http://", "https://", "src=", "href=", "@import", "url("] {
        if external == "http://" {
            // The SVG namespace is a name, not a fetch.
            let n = page.matches("http://").count();
            let ns = page.matches("http://www.w3.org/2000/svg").count();
            assert_eq!(n, ns, "the page refers to something outside");
            continue;
        }
        assert!(!page.contains(external), "the page loads {external}");
    }
    // Its data needs the token.
    assert_eq!(http_get(http, "/status/history", None).await.0, 401);

    let jobs = [
        (6, 1, 1, P::Normal),
        (6, 2, 2, P::High),
        (6, 3, 3, P::Critical),
        (6, 4, 1, P::Low),
        (6, 5, 2, P::Normal),
    ];
    prove_all(&t, &jobs).await;
    // A few samples after the last job.
    tokio::time::sleep(Duration::from_millis(800)).await;

    let (code, body) = http_get(http, "/status/history", Some(TOKEN)).await;
    assert_eq!(code, 200);
    let h: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(h["capacity"], 14_400, "an hour at 250 ms");
    assert_eq!(h["interval_ms"], 250);
    let n = h["samples"]["t_unix_ms"].as_array().unwrap().len();
    assert!(n >= 3, "{n} samples");
    assert_eq!(h["samples"]["worker_busy"].as_array().unwrap().len(), 2);
    assert_eq!(h["samples"]["queued"].as_array().unwrap().len(), 4);
    assert_eq!(h["devices"].as_array().unwrap().len(), 0);
    assert_eq!(h["jobs"].as_array().unwrap().len(), jobs.len());
    assert_eq!(h["jobs"][0]["id"], 5, "newest first");
    assert_eq!(h["samples"]["completed"][n - 1], 5);
    assert_eq!(h["ring_dropped"], 0);
    let t_of = |h: &serde_json::Value, i: usize| h["samples"]["t_unix_ms"][i].as_u64().unwrap();
    assert_eq!(h["first_t_unix_ms"].as_u64(), Some(t_of(&h, 0)));
    // ?since= the last sample of the ring: only the later ones, and one
    // taken at the request.
    let last_kept = t_of(&h, n - 2);
    let (code, body) = http_get(
        http,
        &format!("/status/history?since={last_kept}"),
        Some(TOKEN),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let later: serde_json::Value = serde_json::from_str(&body).unwrap();
    let m = later["samples"]["t_unix_ms"].as_array().unwrap().len();
    assert!(m >= 1 && m < n, "{m} samples after {last_kept}, {n} in all");
    assert!((0..m).all(|i| t_of(&later, i) > last_kept));
    assert_eq!(
        later["samples"]["worker_busy"][1].as_array().unwrap().len(),
        m
    );
    assert_eq!(later["first_t_unix_ms"], h["first_t_unix_ms"]);
    let (code, _) = http_get(http, "/status/history?since=soon", Some(TOKEN)).await;
    assert_eq!(code, 400);

    let st = status_json(http).await;
    let url = format!("http://{http}/#token={TOKEN}");
    let dom = dom(url.clone()).await;
    check_page(&dom, &st, jobs.len());
    // Every sample the ring held before the page opened, and later ones.
    assert!(num(&dom, "page", "data-samples") >= n as f64);
    assert_eq!(attr(&dom, "vram", "data-gpus"), "0");
    assert!(
        text(&dom, "vram-note").contains("no GPU"),
        "{}",
        text(&dom, "vram-note")
    );
    assert_eq!(text(&dom, "gpus"), "none");
    assert_eq!(text(&dom, "backend"), st["backend"].as_str().unwrap());

    // Without the token the page asks for it.
    let dom = self::dom(format!("http://{http}/")).await;
    assert_eq!(text(&dom, "conn"), "token needed");
    assert_eq!(attr(&dom, "page", "data-ready"), "0");

    screenshot(url, "status-page-cpu.png").await;
    t.stop().await;
}

/// Two stand-in GPUs: the CPU prover behind a backend that has devices,
/// with VRAM used by what it holds resident.
struct TwoGpus {
    resident: Vec<FakeResident>,
}

const VRAM: u64 = 24 << 30;
/// What the stand-in's driver and context take on each device.
const VRAM_BASE: u64 = 700 << 20;

impl DeviceBackend for TwoGpus {
    fn name(&self) -> &'static str {
        "fake-gpu"
    }
    fn devices(&self) -> Vec<DeviceInfo> {
        (0..2u32)
            .map(|index| {
                let held = self.resident[index as usize].held();
                DeviceInfo {
                    index,
                    name: format!("Stand-in {index}"),
                    vram_total_bytes: VRAM,
                    vram_free_bytes: VRAM - VRAM_BASE - held,
                    ..Default::default()
                }
            })
            .collect()
    }
    fn prover(&self, _device: Option<u32>) -> Arc<dyn ProverBackend> {
        Arc::new(CpuBackend)
    }
    fn upload_params(
        &self,
        device: u32,
        id: &str,
        params: &Arc<Parameters>,
    ) -> Result<u64, DeviceError> {
        Ok(self.resident[device as usize].upload(id, params))
    }
    fn release_params(&self, device: u32, id: &str) {
        self.resident[device as usize].release(id);
    }
    fn resident_params(&self, device: u32) -> Vec<ResidentParams> {
        self.resident[device as usize].list()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_status_page_plots_each_gpus_vram() {
    chromium();
    let gpus = Arc::new(TwoGpus {
        resident: (0..2).map(|_| FakeResident::default()).collect(),
    });
    let g = gpus.clone();
    let t = TestDaemon::start_with(
        |c| c.server.status_sample_interval_ms = 250,
        move |b| b.device_backend(g),
    )
    .await;
    let http = t.daemon().http_addr.unwrap();
    let jobs = [
        (6, 1, 2, P::Normal),
        (6, 2, 2, P::Normal),
        (6, 3, 1, P::High),
    ];
    prove_all(&t, &jobs).await;
    tokio::time::sleep(Duration::from_millis(800)).await;

    let st = status_json(http).await;
    let url = format!("http://{http}/#token={TOKEN}");
    let dom = dom(url.clone()).await;
    check_page(&dom, &st, jobs.len());
    assert_eq!(attr(&dom, "vram", "data-gpus"), "2");
    assert_eq!(text(&dom, "gpus"), "2");
    assert!(dom.contains("gpu 0 Stand-in 0: "), "a legend line per GPU");
    assert!(dom.contains("gpu 1 Stand-in 1: "));
    assert!(dom.contains(" of 24.0 GiB"), "each GPU's total");
    // Its workers are the GPUs' (a row of the busy plot each).
    assert!(dom.contains(">w0 gpu0</text>") && dom.contains(">w3 gpu1</text>"));
    screenshot(url, "status-page-gpu.png").await;
    t.stop().await;
}
