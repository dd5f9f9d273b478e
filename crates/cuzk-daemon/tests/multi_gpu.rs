//! Several GPUs in one machine, with two fake devices behind the device
//! seam (the CPU prover wrapped per device, recording what each proved and
//! able to fail as a lost GPU does): a 10-partition job proved on both; a
//! critical job proved by the free worker of one device while the other's
//! is busy; a
//! device lost mid-job sends its partitions to the other and the job
//! completes; both lost fails the job naming both; a partition out of
//! retries fails its job; an error that is not a lost device fails its
//! job at once and leaves the device in service; each device's VRAM and residency are its own;
//! status (gRPC, HTTP, `cuzk status`) lists both devices and their health;
//! a lost device that passes a probe is used again, one that keeps failing
//! its probes stays out; a job whose partitions fit no device is refused at
//! submission (or, parameters generated after it, before synthesis) naming
//! the sizes, and one that fits one device is proved there.

mod common;

use common::*;
use cuzk_core::params::Parameters;
use cuzk_core::prover::{CpuBackend, MsmResults, ProverBackend};
use cuzk_core::{PhaseTimings, ProvingAssignment};
use cuzk_daemon::devices::{
    DeviceBackend, DeviceError, DeviceInfo, NoPlanFits, PartitionSizes, ResidentParams,
};
use cuzk_daemon::proto::{self, Priority as P};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a held prover call waits at most for the other device (the
/// test then fails on what it asserts; it never passes by waiting).
const HOLD_LIMIT: Duration = Duration::from_secs(60);

/// One fake GPU: its memory, what it holds and what it proved.
struct FakeDevice {
    index: u32,
    vram_total: u64,
    /// Resident parameter id -> bytes (the backend's table, per device).
    resident: FakeResident,
    /// Prover calls started, and circuits proved.
    calls: AtomicUsize,
    proved: AtomicUsize,
    /// Fail every call after this many (usize::MAX: never).
    fail_after: AtomicUsize,
    /// Set once it failed: a lost device stays lost (uploads fail too).
    lost: AtomicBool,
    /// Refuse every call with an error that is not a lost device (as a
    /// partition that fits no staging plan is refused).
    refuse: AtomicBool,
    /// Probes answered, and the probe from which on it works again
    /// (usize::MAX: never).
    probes: AtomicUsize,
    recover_at_probe: AtomicUsize,
}

/// The error a lost fake device returns, typed so that the backend can
/// recognise it (as the CUDA adapter would a sticky CUDA error).
#[derive(Debug, thiserror::Error)]
#[error("device {device} lost (call {call})")]
struct DeviceLost {
    device: u32,
    call: usize,
}

impl FakeDevice {
    fn resident_bytes(&self) -> u64 {
        self.resident.held()
    }
}

/// What a prover call waits for before proving.
#[derive(Clone, Copy)]
enum Hold {
    None,
    /// Until every device has started a call (so that each proves some).
    AllStarted,
    /// Until device N is lost (so that it takes the chunks until then).
    Lost(usize),
    /// Until device N has started this many calls.
    Calls(usize, usize),
    /// Until the test opens the gate (`FakeGpus::open_gate`).
    Gate,
}

struct FakeGpus {
    devices: Vec<Arc<FakeDevice>>,
    hold: Mutex<Vec<Hold>>,
    gate_open: AtomicBool,
}

impl FakeGpus {
    /// `vram[i]`: device i's memory.
    fn new(vram: &[u64]) -> Arc<Self> {
        Arc::new(FakeGpus {
            devices: vram
                .iter()
                .enumerate()
                .map(|(i, &v)| {
                    Arc::new(FakeDevice {
                        index: i as u32,
                        vram_total: v,
                        resident: FakeResident::default(),
                        calls: AtomicUsize::new(0),
                        proved: AtomicUsize::new(0),
                        fail_after: AtomicUsize::new(usize::MAX),
                        lost: AtomicBool::new(false),
                        refuse: AtomicBool::new(false),
                        probes: AtomicUsize::new(0),
                        recover_at_probe: AtomicUsize::new(usize::MAX),
                    })
                })
                .collect(),
            hold: Mutex::new(vec![Hold::None; vram.len()]),
            gate_open: AtomicBool::new(false),
        })
    }
    fn open_gate(&self) {
        self.gate_open.store(true, Ordering::SeqCst);
    }
    fn calls(&self, device: usize) -> usize {
        self.devices[device].calls.load(Ordering::SeqCst)
    }
    fn fail_after(&self, device: usize, calls: usize) {
        self.devices[device]
            .fail_after
            .store(calls, Ordering::SeqCst);
    }
    fn hold(&self, device: usize, h: Hold) {
        self.hold.lock().unwrap()[device] = h;
    }
    fn proved(&self, device: usize) -> usize {
        self.devices[device].proved.load(Ordering::SeqCst)
    }
    fn wait(&self, device: usize) {
        let h = self.hold.lock().unwrap()[device];
        let start = Instant::now();
        let done = || match h {
            Hold::None => true,
            Hold::AllStarted => self
                .devices
                .iter()
                .all(|d| d.calls.load(Ordering::SeqCst) > 0),
            Hold::Lost(n) => self.devices[n].lost.load(Ordering::SeqCst),
            Hold::Calls(n, calls) => self.devices[n].calls.load(Ordering::SeqCst) >= calls,
            Hold::Gate => self.gate_open.load(Ordering::SeqCst),
        };
        while !done() && start.elapsed() < HOLD_LIMIT {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// A device's prover: the CPU backend, or the error a lost GPU returns.
struct FakeProver {
    gpus: Arc<FakeGpus>,
    device: usize,
}

impl ProverBackend for FakeProver {
    fn name(&self) -> &'static str {
        "fake-gpu"
    }
    fn compute(
        &self,
        params: &Parameters,
        assignments: &[ProvingAssignment],
    ) -> cuzk_core::Result<(Vec<MsmResults>, PhaseTimings)> {
        let d = &self.gpus.devices[self.device];
        let call = d.calls.fetch_add(1, Ordering::SeqCst) + 1;
        self.gpus.wait(self.device);
        if d.lost.load(Ordering::SeqCst) || call > d.fail_after.load(Ordering::SeqCst) {
            d.lost.store(true, Ordering::SeqCst);
            return Err(cuzk_core::Error::Backend {
                backend: "fake-gpu",
                source: Box::new(DeviceLost {
                    device: d.index,
                    call,
                }),
            });
        }
        if d.refuse.load(Ordering::SeqCst) {
            return Err(cuzk_core::Error::Backend {
                backend: "fake-gpu",
                source: format!("device {}: the partition fits no staging plan", d.index).into(),
            });
        }
        let r = CpuBackend.compute(params, assignments)?;
        d.proved.fetch_add(assignments.len(), Ordering::SeqCst);
        Ok(r)
    }
}

/// The backend's half: `FakeGpus` behind an `Arc` so each prover can
/// reach the others' state (holds).
struct Backend(Arc<FakeGpus>);

impl DeviceBackend for Backend {
    fn name(&self) -> &'static str {
        "fake-gpu"
    }
    fn devices(&self) -> Vec<DeviceInfo> {
        self.0
            .devices
            .iter()
            .map(|d| DeviceInfo {
                index: d.index,
                name: format!("fake {}", d.index),
                vram_total_bytes: d.vram_total,
                vram_free_bytes: d.vram_total - d.resident_bytes(),
                ..Default::default()
            })
            .collect()
    }
    fn prover(&self, device: Option<u32>) -> Arc<dyn ProverBackend> {
        Arc::new(FakeProver {
            gpus: self.0.clone(),
            device: device.expect("GPU workers are bound to a device") as usize,
        })
    }
    fn upload_params(
        &self,
        device: u32,
        id: &str,
        params: &Arc<Parameters>,
    ) -> Result<u64, DeviceError> {
        let d = &self.0.devices[device as usize];
        if d.lost.load(Ordering::SeqCst) {
            return Err(format!("device {device} lost").into());
        }
        // Each device's own memory bounds what it holds.
        let bytes = FakeResident::bytes_of(params);
        if d.resident_bytes() + bytes > d.vram_total {
            return Err(format!("device {device}: no room for {id} ({bytes} bytes)").into());
        }
        d.resident.insert(id, bytes);
        Ok(bytes)
    }
    /// The fake's least plan streams the bases (as the CUDA backend's
    /// can) and holds the domain's scalars, 32 bytes each.
    fn check_fits(&self, device: u32, sizes: &PartitionSizes) -> Result<(), NoPlanFits> {
        let d = &self.0.devices[device as usize];
        let needed = sizes.domain as u64 * 32;
        if needed > d.vram_total {
            return Err(NoPlanFits {
                device,
                needed,
                capacity: d.vram_total,
            });
        }
        Ok(())
    }
    fn is_device_lost(&self, _device: u32, error: &cuzk_core::Error) -> bool {
        match error {
            cuzk_core::Error::Backend { source, .. } => source.is::<DeviceLost>(),
            _ => false,
        }
    }
    fn probe(&self, device: u32) -> Result<(), DeviceError> {
        let d = &self.0.devices[device as usize];
        let n = d.probes.fetch_add(1, Ordering::SeqCst) + 1;
        if n < d.recover_at_probe.load(Ordering::SeqCst) {
            return Err(format!("device {device} still lost (probe {n})").into());
        }
        d.fail_after.store(usize::MAX, Ordering::SeqCst);
        d.lost.store(false, Ordering::SeqCst);
        Ok(())
    }
    fn release_params(&self, device: u32, id: &str) {
        self.0.devices[device as usize].resident.release(id);
    }
    fn resident_params(&self, device: u32) -> Vec<ResidentParams> {
        self.0.devices[device as usize].resident.list()
    }
}

const GIB: u64 = 1 << 30;

async fn start(gpus: &Arc<FakeGpus>, retries: u32) -> TestDaemon {
    // Probes every minute (the default): none in these tests' time.
    start_probing(gpus, retries, 60).await
}

async fn start_probing(gpus: &Arc<FakeGpus>, retries: u32, probe_s: u64) -> TestDaemon {
    let b = Arc::new(Backend(gpus.clone()));
    TestDaemon::start_with(
        move |c| {
            c.engine.gpu_workers_per_device = 1;
            c.engine.max_batch_size = 1;
            c.engine.synthesis_lookahead = 4;
            c.engine.partition_retries = retries;
            c.engine.device_probe_interval_s = probe_s;
        },
        move |d| d.device_backend(b),
    )
    .await
}

async fn prove(c: &mut cuzk_daemon::client::DaemonClient, seed: u64) -> proto::AwaitProofResponse {
    let id = submit_id(c, req(6, seed, 10, P::Normal)).await;
    await_done(c, id).await
}

/// Status once `done` holds (the probes run on their own, every second in
/// these tests); panics after a limit, so a test fails rather than hangs.
async fn status_when(
    c: &mut cuzk_daemon::client::DaemonClient,
    what: &str,
    done: impl Fn(&proto::GetStatusResponse) -> bool,
) -> proto::GetStatusResponse {
    let start = Instant::now();
    loop {
        let st = status(c).await;
        if done(&st) {
            return st;
        }
        assert!(
            start.elapsed() < HOLD_LIMIT,
            "{what} never happened: {st:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn device(st: &proto::GetStatusResponse, i: u32) -> &proto::Device {
    st.devices
        .iter()
        .find(|d| d.index == i)
        .expect("device in status")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_ten_partition_job_uses_both_devices() {
    let gpus = FakeGpus::new(&[8 * GIB, 8 * GIB]);
    gpus.hold(0, Hold::AllStarted);
    gpus.hold(1, Hold::AllStarted);
    let t = start(&gpus, 2).await;
    let mut c = t.unix().await;
    let r = prove(&mut c, 3).await;
    check_proofs(&t.pvk(6), 6, 3, 10, &r);
    assert!(gpus.proved(0) > 0, "device 0 proved nothing");
    assert!(gpus.proved(1) > 0, "device 1 proved nothing");
    assert_eq!(gpus.proved(0) + gpus.proved(1), 10);
    let st = status(&mut c).await;
    assert_eq!(st.devices.len(), 2);
    for i in 0..2 {
        let d = device(&st, i);
        assert!(d.healthy, "device {i}");
        assert_eq!(d.failures, 0);
        assert_eq!(d.partitions_proved, gpus.proved(i as usize) as u64);
        assert_eq!(d.vram_total_bytes, 8 * GIB);
    }
    // Each device holds the parameters it proved with; status sums them.
    let p6 = st
        .params
        .iter()
        .find(|p| p.id == cuzk_core::circuits::porep_like::params_id(6))
        .unwrap();
    assert_eq!(p6.tier, "vram");
    assert_eq!(p6.devices, vec![0, 1]);
    let per = gpus.devices[0].resident_bytes();
    assert!(per > 0);
    assert_eq!(p6.bytes, 2 * per);
    t.stop().await;
}

/// A critical job (WinningPoSt's priority) arriving while one GPU's only
/// worker is busy is proved at once by the other GPU's free worker, with
/// other parameters than the busy one holds, and the busy GPU's job is
/// unharmed.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_critical_job_takes_the_free_worker_of_the_other_device() {
    let gpus = FakeGpus::new(&[8 * GIB, 8 * GIB]);
    gpus.hold(0, Hold::Gate);
    gpus.hold(1, Hold::Gate);
    let t = start(&gpus, 2).await;
    let mut c = t.unix().await;
    let normal = submit_id(&mut c, req(8, 21, 1, P::Normal)).await;
    let start = Instant::now();
    while gpus.calls(0) + gpus.calls(1) == 0 {
        assert!(
            start.elapsed() < HOLD_LIMIT,
            "the normal job never reached a device"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let busy = if gpus.calls(0) == 1 { 0 } else { 1 };
    let free = 1 - busy;
    gpus.hold(free, Hold::None);
    let critical = submit_id(&mut c, req(6, 22, 1, P::Critical)).await;
    let r = await_done(&mut c, critical).await;
    check_proofs(&t.pvk(6), 6, 22, 1, &r);
    assert_eq!(
        gpus.proved(free),
        1,
        "the free device proved the critical job"
    );
    assert_eq!(
        (gpus.calls(busy), gpus.proved(busy)),
        (1, 0),
        "the busy device is still on the normal job"
    );
    gpus.open_gate();
    let r = await_done(&mut c, normal).await;
    check_proofs(&t.pvk(8), 8, 21, 1, &r);
    assert_eq!(gpus.proved(busy), 1);
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_device_lost_mid_job_sends_its_partitions_to_the_other() {
    let gpus = FakeGpus::new(&[8 * GIB, 8 * GIB]);
    // Device 1 proves two partitions, then is lost on its third call;
    // device 0 waits until then, so device 1 is sure to get that far.
    gpus.fail_after(1, 2);
    gpus.hold(0, Hold::Lost(1));
    let t = start(&gpus, 2).await;
    let mut c = t.unix().await;
    let r = prove(&mut c, 5).await;
    check_proofs(&t.pvk(6), 6, 5, 10, &r);
    assert_eq!(gpus.proved(1), 2);
    assert_eq!(gpus.proved(0), 8);
    // Device 1 was called once more (the failure) and not again.
    assert_eq!(gpus.devices[1].calls.load(Ordering::SeqCst), 3);

    let st = status(&mut c).await;
    let (d0, d1) = (device(&st, 0), device(&st, 1));
    assert!(d0.healthy);
    assert_eq!((d0.partitions_proved, d0.failures), (8, 0));
    assert!(!d1.healthy, "device 1 still in service after it was lost");
    assert_eq!((d1.partitions_proved, d1.failures), (2, 1));
    assert!(d1.last_error.contains("device 1 lost"), "{}", d1.last_error);
    let counters = st.counters.unwrap();
    assert_eq!(counters.completed, 1);
    assert_eq!(counters.failed, 0);

    // A second job runs on device 0 alone.
    let r = prove(&mut c, 6).await;
    check_proofs(&t.pvk(6), 6, 6, 10, &r);
    assert_eq!(gpus.proved(0), 18);
    assert_eq!(gpus.devices[1].calls.load(Ordering::SeqCst), 3);

    // The CLI's table and HTTP /status say the same.
    let st = status(&mut c).await;
    let text = cuzk_daemon::report::status_text(&cuzk_daemon::report::status_json(&st));
    let lines: Vec<&str> = text.lines().collect();
    let row = |i: &str| {
        lines
            .iter()
            .find(|l| l.trim_start().starts_with(&format!("{i} ")) && l.contains("fake"))
            .copied()
            .unwrap_or_else(|| panic!("no row for gpu {i} in:\n{text}"))
    };
    assert!(row("0").contains("ok") && row("0").contains("18"), "{text}");
    assert!(row("1").contains("out of service"), "{text}");
    assert!(
        text.contains("gpu 1 error: backend fake-gpu: device 1 lost"),
        "{text}"
    );
    let addr = t.daemon().http_addr.unwrap();
    let (code, body) = http_get(addr, "/status", Some(TOKEN)).await;
    assert_eq!(code, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let h = v["device_health"].as_array().unwrap();
    assert_eq!(h.len(), 2);
    assert_eq!(h[0]["healthy"], true);
    assert_eq!(h[1]["healthy"], false);
    assert_eq!(h[0]["partitions_proved"], 18);
    assert_eq!(v["devices"].as_array().unwrap().len(), 2);
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn both_devices_lost_fails_the_job_naming_both() {
    let gpus = FakeGpus::new(&[8 * GIB, 8 * GIB]);
    gpus.fail_after(0, 0);
    gpus.fail_after(1, 0);
    let t = start(&gpus, 2).await;
    let mut c = t.unix().await;
    let r = prove(&mut c, 7).await;
    assert_eq!(r.state, proto::JobState::Failed as i32, "{}", r.error);
    assert!(r.error.contains("no GPU is left in service"), "{}", r.error);
    assert!(
        r.error.contains("gpu 0: backend fake-gpu: device 0 lost"),
        "{}",
        r.error
    );
    assert!(
        r.error.contains("gpu 1: backend fake-gpu: device 1 lost"),
        "{}",
        r.error
    );
    assert!(r.proof.is_empty());
    let st = status(&mut c).await;
    assert!(st.devices.iter().all(|d| !d.healthy));
    assert_eq!(gpus.proved(0) + gpus.proved(1), 0);
    // A job submitted now fails at once, with the same reasons, and
    // nothing is proved or synthesized for it.
    let calls = |g: &FakeGpus| {
        g.devices
            .iter()
            .map(|d| d.calls.load(Ordering::SeqCst))
            .sum::<usize>()
    };
    let before = calls(&gpus);
    let r = prove(&mut c, 8).await;
    assert_eq!(r.state, proto::JobState::Failed as i32);
    assert!(
        r.error.contains("gpu 0") && r.error.contains("gpu 1"),
        "{}",
        r.error
    );
    assert_eq!(calls(&gpus), before);
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_partition_out_of_retries_fails_its_job() {
    let gpus = FakeGpus::new(&[8 * GIB, 8 * GIB]);
    // No retries: device 1's first failure fails the job, though device 0
    // still serves.
    gpus.fail_after(1, 0);
    gpus.hold(0, Hold::Lost(1));
    let t = start(&gpus, 0).await;
    let mut c = t.unix().await;
    let r = prove(&mut c, 9).await;
    assert_eq!(r.state, proto::JobState::Failed as i32, "{}", r.error);
    assert!(
        r.error.contains(
            "failed on every try it was allowed (1 of 1: gpu 1: backend fake-gpu: device 1 lost"
        ),
        "{}",
        r.error
    );
    // The engine's record says the same in fields: which partition, how
    // many tries were allowed, and on which GPU each one failed.
    let view = t.d.as_ref().unwrap().engine.job(r.job_id).unwrap();
    match view.error {
        Some(cuzk_daemon::JobFailure::RetriesExhausted {
            allowed: 1,
            ref tries,
            ..
        }) => {
            assert_eq!(tries.len(), 1);
            assert_eq!(tries[0].device, 1);
        }
        ref other => panic!("{other:?}"),
    }
    let st = status(&mut c).await;
    assert!(device(&st, 0).healthy);
    assert!(!device(&st, 1).healthy);
    // Device 0 still proves.
    let r = prove(&mut c, 10).await;
    check_proofs(&t.pvk(6), 6, 10, 10, &r);
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_device_has_its_own_memory_and_residency() {
    // Device 1 has too little memory to keep the parameters (6048 bytes):
    // it proves (its prover streams them) but holds nothing, while device 0
    // holds them; status counts them once, on device 0.
    let gpus = FakeGpus::new(&[8 * GIB, 4096]);
    gpus.hold(0, Hold::AllStarted);
    gpus.hold(1, Hold::AllStarted);
    let t = start(&gpus, 2).await;
    let mut c = t.unix().await;
    let r = prove(&mut c, 11).await;
    check_proofs(&t.pvk(6), 6, 11, 10, &r);
    assert!(gpus.proved(0) > 0 && gpus.proved(1) > 0);
    let st = status(&mut c).await;
    let per = gpus.devices[0].resident_bytes();
    assert!(per > 4096);
    assert_eq!(gpus.devices[1].resident_bytes(), 0);
    let p6 = st
        .params
        .iter()
        .find(|p| p.id == cuzk_core::circuits::porep_like::params_id(6))
        .unwrap();
    assert_eq!(p6.devices, vec![0]);
    assert_eq!(p6.bytes, per);
    let (d0, d1) = (device(&st, 0), device(&st, 1));
    assert_eq!(
        (d0.vram_total_bytes, d0.vram_free_bytes),
        (8 * GIB, 8 * GIB - per)
    );
    assert_eq!((d1.vram_total_bytes, d1.vram_free_bytes), (4096, 4096));
    // Evicting on device 0 leaves device 1 as it was, and the set leaves
    // the VRAM tier.
    Backend(gpus.clone()).release_params(0, &cuzk_core::circuits::porep_like::params_id(6));
    let st = status(&mut c).await;
    let p6 = st
        .params
        .iter()
        .find(|p| p.id == cuzk_core::circuits::porep_like::params_id(6))
        .unwrap();
    assert_ne!(p6.tier, "vram");
    assert!(p6.devices.is_empty());
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_error_that_is_not_a_lost_device_fails_the_job_and_keeps_the_device() {
    let gpus = FakeGpus::new(&[8 * GIB, 8 * GIB]);
    for d in &gpus.devices {
        d.refuse.store(true, Ordering::SeqCst);
    }
    let t = start(&gpus, 2).await;
    let mut c = t.unix().await;
    let r = prove(&mut c, 12).await;
    assert_eq!(r.state, proto::JobState::Failed as i32, "{}", r.error);
    assert!(r.error.contains("fits no staging plan"), "{}", r.error);
    // Failed at once, not as a partition out of tries or a lost device.
    assert!(!r.error.contains("try") && !r.error.contains("in service"));
    let st = status(&mut c).await;
    assert!(st.devices.iter().all(|d| d.healthy && d.failures == 0));
    // Both still serve once the refusals stop.
    for d in &gpus.devices {
        d.refuse.store(false, Ordering::SeqCst);
    }
    let r = prove(&mut c, 13).await;
    check_proofs(&t.pvk(6), 6, 13, 10, &r);
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lost_device_that_passes_a_probe_is_used_again() {
    let gpus = FakeGpus::new(&[8 * GIB, 8 * GIB]);
    // Device 1 is lost on its third call; it fails its probes until the
    // first job is done, and from then on passes its third.
    gpus.fail_after(1, 2);
    gpus.hold(0, Hold::Lost(1));
    let t = start_probing(&gpus, 2, 1).await;
    let mut c = t.unix().await;
    let r = prove(&mut c, 21).await;
    check_proofs(&t.pvk(6), 6, 21, 10, &r);
    assert_eq!(gpus.proved(1), 2);
    assert!(!device(&status(&mut c).await, 1).healthy);
    gpus.devices[1].recover_at_probe.store(3, Ordering::SeqCst);
    let st = status_when(&mut c, "device 1's return", |st| device(st, 1).healthy).await;
    let d1 = device(&st, 1);
    let probes = gpus.devices[1].probes.load(Ordering::SeqCst) as u64;
    assert!(probes >= 3, "returned after {probes} probes");
    assert_eq!((d1.probes, d1.returned), (probes, 1));
    assert_eq!(d1.out_since_unix_ms, 0, "back in service, not out");
    assert!(d1.last_probe_unix_ms > 0);
    assert!(d1.last_probe_error.is_empty(), "{}", d1.last_probe_error);
    // Its failure stays on record.
    assert_eq!(d1.failures, 1);
    assert!(d1.last_error.contains("device 1 lost"), "{}", d1.last_error);
    // The next job uses it again: device 0 waits until device 1 started a
    // fourth call.
    gpus.hold(0, Hold::Calls(1, 4));
    let r = prove(&mut c, 22).await;
    check_proofs(&t.pvk(6), 6, 22, 10, &r);
    assert!(
        gpus.proved(1) > 2,
        "device 1 proved nothing after its return"
    );
    assert_eq!(gpus.proved(0) + gpus.proved(1), 20);
    let st = status(&mut c).await;
    assert!(st.devices.iter().all(|d| d.healthy));
    assert_eq!(device(&st, 1).partitions_proved, gpus.proved(1) as u64);
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lost_device_that_fails_its_probes_stays_out() {
    let gpus = FakeGpus::new(&[8 * GIB, 8 * GIB]);
    gpus.fail_after(1, 0);
    gpus.hold(0, Hold::Lost(1));
    let t = start_probing(&gpus, 2, 1).await;
    let mut c = t.unix().await;
    let r = prove(&mut c, 23).await;
    check_proofs(&t.pvk(6), 6, 23, 10, &r);
    let st = status_when(&mut c, "three probes of device 1", |st| {
        device(st, 1).probes >= 3
    })
    .await;
    let d1 = device(&st, 1);
    assert!(
        !d1.healthy,
        "device 1 back in service though every probe failed"
    );
    assert_eq!(d1.returned, 0);
    assert!(d1.out_since_unix_ms > 0);
    assert!(d1.last_probe_unix_ms >= d1.out_since_unix_ms);
    assert!(
        d1.last_probe_error.contains("device 1 still lost"),
        "{}",
        d1.last_probe_error
    );
    // The healthy device never is probed.
    assert_eq!(gpus.devices[0].probes.load(Ordering::SeqCst), 0);
    assert_eq!(device(&st, 0).probes, 0);
    // Jobs go on on device 0 alone.
    gpus.hold(0, Hold::None);
    let calls = gpus.devices[1].calls.load(Ordering::SeqCst);
    let r = prove(&mut c, 24).await;
    check_proofs(&t.pvk(6), 6, 24, 10, &r);
    assert_eq!(gpus.devices[1].calls.load(Ordering::SeqCst), calls);
    // `cuzk status` says since when and how its probes went.
    let st = status(&mut c).await;
    let text = cuzk_daemon::report::status_text(&cuzk_daemon::report::status_json(&st));
    let line = text
        .lines()
        .find(|l| l.contains("gpu 1 out of service since"))
        .unwrap_or_else(|| panic!("no out-of-service line for gpu 1 in:\n{text}"));
    assert!(
        line.contains("probes, last") && line.contains("device 1 still lost"),
        "{line}"
    );
    assert!(!text.contains("gpu 0 out of service"), "{text}");
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn status_has_each_devices_busy_fraction() {
    let gpus = FakeGpus::new(&[8 * GIB, 8 * GIB]);
    let t = start(&gpus, 2).await;
    let mut c = t.unix().await;
    let st = status(&mut c).await;
    for d in &st.devices {
        assert_eq!(
            (d.busy_s, d.busy_fraction, d.busy_fraction_window),
            (0.0, 0.0, 0.0)
        );
    }
    // One partition: one device proves it, the other is never called.
    let id = submit_id(&mut c, req(6, 25, 1, P::Normal)).await;
    let r = await_done(&mut c, id).await;
    check_proofs(&t.pvk(6), 6, 25, 1, &r);
    let used = if gpus.proved(0) == 1 { 0 } else { 1 };
    assert_eq!(gpus.proved(used), 1);
    let idle = 1 - used;
    assert_eq!(gpus.devices[idle].calls.load(Ordering::SeqCst), 0);
    let st = status(&mut c).await;
    let (u, i) = (device(&st, used as u32), device(&st, idle as u32));
    assert!(u.busy_s > 0.0, "{u:?}");
    assert!(u.busy_fraction > 0.0 && u.busy_fraction <= 1.0, "{u:?}");
    assert!(
        u.busy_fraction_window > 0.0 && u.busy_fraction_window <= 1.0,
        "{u:?}"
    );
    assert_eq!(
        (i.busy_s, i.busy_fraction, i.busy_fraction_window),
        (0.0, 0.0, 0.0)
    );
    // No call in flight: the total no longer grows.
    let again = status(&mut c).await;
    assert_eq!(device(&again, used as u32).busy_s, u.busy_s);
    // /status and `cuzk status` carry them.
    let (code, body) = http_get(t.daemon().http_addr.unwrap(), "/status", Some(TOKEN)).await;
    assert_eq!(code, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let h = &v["device_health"][used];
    assert!(h["busy_s"].as_f64().unwrap() > 0.0, "{h}");
    assert!(h["busy_fraction"].as_f64().unwrap() > 0.0, "{h}");
    assert_eq!(v["device_health"][idle]["busy_s"], 0.0);
    let text = cuzk_daemon::report::status_text(&cuzk_daemon::report::status_json(&st));
    assert!(
        text.contains("busy (window)") && text.contains("busy (all)"),
        "{text}"
    );
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{idle} ")) && l.contains("fake"))
        .unwrap_or_else(|| panic!("no row for gpu {idle} in:\n{text}"));
    // Its last two cells: busy over the window and since start.
    let cells: Vec<&str> = row.split_whitespace().rev().take(2).collect();
    assert_eq!(cells, ["0%", "0%"], "{row}");
    t.stop().await;
}

/// Writes porep-like-`log`'s parameters where the daemon looks for them
/// (as it would generate them), so that submissions can read their sizes.
fn write_params(t: &TestDaemon, log: u32) {
    use cuzk_daemon::kinds::CircuitKind;
    let path = t.params_path(log);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    cuzk_daemon::kinds::PorepLikeKind::new(log, 16)
        .generate_params()
        .expect("porep-like generates parameters")
        .unwrap()
        .write_file(&path)
        .unwrap();
}

fn calls(gpus: &FakeGpus) -> usize {
    gpus.devices
        .iter()
        .map(|d| d.calls.load(Ordering::SeqCst))
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_job_that_fits_no_device_is_refused_at_submission() {
    // porep-like-6's domain is 64 scalars: 2048 bytes in the fake's least
    // plan.
    let gpus = FakeGpus::new(&[1024, 2047]);
    let t = start(&gpus, 2).await;
    write_params(&t, 6);
    let mut c = t.unix().await;
    let e = c
        .submit_proof(req(6, 1, 3, P::Normal))
        .await
        .expect_err("refused at submission");
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e:?}");
    let msg = e.message();
    for part in [
        "kind porep-like-6",
        "domain 64",
        "h 63",
        "fits no plan on any GPU",
        "gpu 0: the least any plan needs at once is 2048 bytes, the device's budget is 1024 bytes",
        "gpu 1: the least any plan needs at once is 2048 bytes, the device's budget is 2047 bytes",
        "engine.gpu_vram_limit",
    ] {
        assert!(msg.contains(part), "{part:?} not in {msg:?}");
    }
    let st = status(&mut c).await;
    assert_eq!(st.counters.as_ref().unwrap().rejected, 1);
    assert_eq!(st.counters.as_ref().unwrap().submitted, 0);
    assert_eq!(calls(&gpus), 0, "nothing reached a device");
    assert!(st.params.is_empty(), "nothing was loaded: {:?}", st.params);
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_job_that_fits_one_device_is_proved_there() {
    // Exactly what the partition needs on device 1; device 0 is too small.
    let gpus = FakeGpus::new(&[1024, 2048]);
    let t = start(&gpus, 2).await;
    write_params(&t, 6);
    let mut c = t.unix().await;
    let r = prove_log6(&mut c, 4, 3).await;
    check_proofs(&t.pvk(6), 6, 4, 3, &r);
    assert_eq!(gpus.proved(0), 0, "device 0 fits nothing");
    assert_eq!(gpus.proved(1), 3);
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parameters_generated_after_submission_are_checked_before_synthesis() {
    // No parameter file yet: the submission cannot know the sizes; the
    // daemon generates the parameters when it leases them, then refuses
    // the job before synthesizing or proving anything.
    let gpus = FakeGpus::new(&[1024, 1024]);
    let t = start(&gpus, 2).await;
    let mut c = t.unix().await;
    let id = submit_id(&mut c, req(6, 1, 3, P::Normal)).await;
    let r = await_done(&mut c, id).await;
    assert_eq!(r.state, proto::JobState::Failed as i32, "{r:?}");
    assert!(
        r.error
            .contains("kind porep-like-6: a partition (domain 64")
            && r.error
                .contains("gpu 1: the least any plan needs at once is 2048 bytes"),
        "{}",
        r.error
    );
    assert_eq!(calls(&gpus), 0, "nothing reached a device");
    let synthesis_ms = r.timings.as_ref().map_or(0.0, |t| t.synthesis_ms);
    assert_eq!(synthesis_ms, 0.0, "nothing was synthesized");
    let st = status(&mut c).await;
    assert_eq!(st.counters.as_ref().unwrap().failed, 1);
    // The next submission knows the sizes from the file now.
    let e = c
        .submit_proof(req(6, 2, 1, P::Normal))
        .await
        .expect_err("refused at submission");
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e:?}");
    t.stop().await;
}

async fn prove_log6(
    c: &mut cuzk_daemon::client::DaemonClient,
    seed: u64,
    partitions: u32,
) -> proto::AwaitProofResponse {
    let id = submit_id(c, req(6, seed, partitions, P::Normal)).await;
    await_done(c, id).await
}
