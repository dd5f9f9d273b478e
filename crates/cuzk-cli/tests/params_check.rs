//! `cuzk params info --check`: the subgroup check names the checker that
//! ran it, and a file with one point moved out of the subgroup is refused
//! with the section and the point named (exit 2), by the CPU's checker and
//! by `--backend auto` (the GPU's where there is one).

use blstrs::G1Affine;
use cuzk_core::params::{MappedParameters, Section};
use rand::{RngCore, SeedableRng};
use std::process::{Command, Output};

fn cuzk(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cuzk"))
        .args(args)
        .output()
        .expect("cuzk runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// An uncompressed G1 point on the curve outside the subgroup.
fn outside() -> [u8; 96] {
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    loop {
        let mut x = [0u8; 48];
        rng.fill_bytes(&mut x);
        x[0] = 0x80 | (x[0] & 0x0f);
        if let Some(p) = Option::<G1Affine>::from(G1Affine::from_compressed_unchecked(&x)) {
            if !bool::from(p.is_torsion_free()) {
                return p.to_uncompressed();
            }
        }
    }
}

#[test]
fn params_info_check_names_its_checker_and_the_point_outside() {
    let dir = tempfile::tempdir().unwrap();
    let params = dir.path().join("p.params");
    let o = cuzk(&[
        "params",
        "gen",
        "--log-size",
        "6",
        "--out",
        params.to_str().unwrap(),
        "--backend",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let p = params.to_str().unwrap();

    let o = cuzk(&["params", "info", p, "--check", "--backend", "cpu", "--json"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let info: serde_json::Value = serde_json::from_str(text(&o.stdout).trim()).unwrap();
    assert_eq!(info["checked"], serde_json::json!(true));
    assert_eq!(info["checked_by"], serde_json::json!("cpu"));

    // b_g1 point 3 moved out of the subgroup (still on the curve).
    let (off, len) = {
        let m = MappedParameters::open(&params).unwrap();
        let s = m
            .layout
            .sections
            .iter()
            .find(|s| s.0 == Section::BG1)
            .unwrap();
        (s.1 as usize + 3 * 96, m.len(Section::BG1))
    };
    assert!(len > 3);
    let mut bytes = std::fs::read(&params).unwrap();
    bytes[off..off + 96].copy_from_slice(&outside());
    let bad = dir.path().join("bad.params");
    std::fs::write(&bad, &bytes).unwrap();
    let b = bad.to_str().unwrap();
    for backend in ["cpu", "auto"] {
        let o = cuzk(&["params", "info", b, "--check", "--backend", backend]);
        assert_eq!(o.status.code(), Some(2), "{backend}: {}", text(&o.stdout));
        let e = text(&o.stderr);
        let want = format!("b_g1 point 3 at offset {off}");
        assert!(
            e.contains(&want) && e.contains("subgroup"),
            "{backend}: {e}"
        );
        assert!(e.contains("bad.params"), "{e}");
    }
    // Without --check the file opens (its points are only read on demand).
    let o = cuzk(&["params", "info", b]);
    assert!(o.status.success(), "{}", text(&o.stderr));
}
