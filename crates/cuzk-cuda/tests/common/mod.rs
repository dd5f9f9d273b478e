//! What the emulation tests share: building an emulator driver of emu/
//! (the kernels' CUDA source compiled as C++ against emu/cuda_emu.h) and
//! running it on an input. Needs a C++20 compiler (`$CXX`, else `c++`).
//! Not every test binary uses every helper.
#![allow(dead_code)]

pub mod fields;

/// How an emulator's field arithmetic is built: field.cuh's portable C++,
/// its PTX form ([`emu_binary_ptx`]), or with the FP64 products
/// (field_f64.cuh) mixed in as the kernels' CUZK_FP64_MIX_* build has them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Arith {
    #[default]
    Portable,
    Ptx,
    Fp64Mix,
    /// The PTX form with Fq2's product by wide products and two reductions
    /// (field.cuh's `fq2_mul_lazy`, CUZK_FQ2_LAZY).
    PtxLazyFq2,
}

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// emu/`source` compiled with the macros `defines`, once per test binary
/// and build; the executable is named `name` in Cargo's test scratch
/// directory. Field arithmetic by field.cuh's portable C++ (CUZK_EMU).
pub fn emu_binary(source: &str, name: &str, defines: &[&str]) -> PathBuf {
    build_emu(source, name, defines, false)
}

/// As [`emu_binary`], with field.cuh's PTX paths instead of its portable
/// ones: every inline-PTX statement rewritten as calls of cuda_emu.h's
/// emulation of its instructions ([`ptx_as_cpp`]), so the carry chains the
/// GPU runs are checked here too.
pub fn emu_binary_ptx(source: &str, name: &str, defines: &[&str]) -> PathBuf {
    build_emu(source, name, defines, true)
}

/// The driver emu/`source` in `arith`'s form: binaries `stem`,
/// `stem`_ptx and `stem`_fp64, the last built with `fp64_define` (the
/// CUZK_FP64_MIX_* macro of the field its kernels multiply in).
pub fn emu_binary_for(arith: Arith, source: &str, stem: &str, fp64_define: &str) -> PathBuf {
    match arith {
        Arith::Portable => emu_binary(source, stem, &[]),
        Arith::Ptx => emu_binary_ptx(source, &format!("{stem}_ptx"), &[]),
        Arith::Fp64Mix => emu_binary(source, &format!("{stem}_fp64"), &[fp64_define]),
        Arith::PtxLazyFq2 => {
            emu_binary_ptx(source, &format!("{stem}_ptx_fq2lazy"), &["CUZK_FQ2_LAZY"])
        }
    }
}

fn build_emu(source: &str, name: &str, defines: &[&str], ptx: bool) -> PathBuf {
    static BUILT: Mutex<Option<HashMap<String, PathBuf>>> = Mutex::new(None);
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = built.get_or_insert_with(HashMap::new).get(name) {
        return p.clone();
    }
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    // The PTX build compiles a copy of emu/ and kernels/ (the drivers
    // include "../kernels/..."), field.cuh rewritten.
    let dir = if ptx {
        let copy = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-src"));
        for sub in ["emu", "kernels"] {
            let to = copy.join(sub);
            std::fs::create_dir_all(&to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
            let from = crate_dir.join(sub);
            for f in std::fs::read_dir(&from).unwrap_or_else(|e| panic!("{}: {e}", from.display()))
            {
                let f = f.expect("directory entry").path();
                let text =
                    std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
                let text = if f.file_name().is_some_and(|n| n == "field.cuh") {
                    ptx_as_cpp(&text)
                } else {
                    text
                };
                let dst = to.join(f.file_name().expect("file name"));
                std::fs::write(&dst, text).unwrap_or_else(|e| panic!("{}: {e}", dst.display()));
            }
        }
        copy
    } else {
        crate_dir
    };
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let mut cmd = Command::new(&cxx);
    cmd.args(["-std=c++20", "-O2", "-pthread"]);
    for d in defines {
        cmd.arg(format!("-D{d}"));
    }
    let status = cmd
        .arg("-o")
        .arg(&out)
        .arg(dir.join("emu").join(source))
        .status()
        .unwrap_or_else(|e| panic!("running {cxx} (set CXX to a C++20 compiler): {e}"));
    assert!(
        status.success(),
        "{cxx} failed to compile emu/{source} (PTX form: {ptx})"
    );
    built
        .as_mut()
        .unwrap()
        .insert(name.to_string(), out.clone());
    out
}

/// Runs the emulator `bin` with `input` on stdin and returns its stdout;
/// panics, naming it, if it fails (its stderr says why).
pub fn run_emu(bin: &PathBuf, input: &[u8]) -> Vec<u8> {
    let what = bin.file_name().unwrap_or_default().to_string_lossy();
    let mut child = Command::new(bin)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {what}: {e}"));
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .unwrap_or_else(|e| panic!("writing to {what}: {e}"));
    let out = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("{what}'s output: {e}"));
    assert!(out.status.success(), "{what} failed");
    out.stdout
}

/// field.cuh with its PTX carry chains as C++: the portable branches
/// (`#ifdef CUZK_EMU`) turned off and the product's choice of mont_mul_cios
/// under CUZK_EMU dropped, and each `PTX(...)` / `asm volatile(...)`
/// statement replaced by a block that copies its operands in, runs each
/// instruction as a call of cuda_emu.h's `emu_ptx_add` / `emu_ptx_sub` /
/// `emu_ptx_mad` (CC.CF per thread), and writes its outputs back. An
/// instruction without an emulation, or a file whose selection lines moved,
/// panics: the test names what to teach the translator.
pub fn ptx_as_cpp(src: &str) -> String {
    let portable = "#ifdef CUZK_EMU";
    let choice = "defined(CUZK_CIOS_MUL) || defined(CUZK_EMU)";
    assert!(
        src.contains(portable),
        "field.cuh: no `{portable}` branch to turn off"
    );
    assert_eq!(
        src.matches(choice).count(),
        2,
        "field.cuh: the product and square choices moved"
    );
    let src = src
        .replace(
            portable,
            "#if 0 // CUZK_EMU's portable form: off (PTX emulated)",
        )
        .replace(choice, "defined(CUZK_CIOS_MUL)");
    let mut out = String::with_capacity(src.len() * 2);
    let mut rest = src.as_str();
    loop {
        let next = ["PTX(", "asm volatile("]
            .iter()
            .filter_map(|k| rest.find(k).map(|i| (i, k.len())))
            .filter(|&(i, _)| {
                i == 0 || !rest[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_')
            })
            .min();
        let Some((at, key)) = next else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..at]);
        let body_start = at + key;
        let body_len = closing_paren(&rest[body_start..]);
        let body = &rest[body_start..body_start + body_len];
        let after = rest[body_start + body_len + 1..].trim_start();
        assert!(
            after.starts_with(';'),
            "field.cuh: PTX statement without `;`: {body}"
        );
        out.push_str(&asm_as_cpp(body));
        rest = &after[1..];
    }
}

/// The length of `s` up to the `)` that closes a `(` just before it.
fn closing_paren(s: &str) -> usize {
    let (mut depth, mut in_str) = (0usize, false);
    for (i, c) in s.char_indices() {
        match c {
            '"' => in_str = !in_str,
            '(' if !in_str => depth += 1,
            ')' if !in_str => {
                if depth == 0 {
                    return i;
                }
                depth -= 1;
            }
            _ => {}
        }
    }
    panic!("field.cuh: unclosed PTX statement: {s:.80}")
}

/// `s` split at `sep` where it is outside strings and parentheses.
fn split_top(s: &str, sep: char) -> Vec<&str> {
    let (mut parts, mut start, mut depth, mut in_str) = (Vec::new(), 0, 0usize, false);
    for (i, c) in s.char_indices() {
        match c {
            '"' => in_str = !in_str,
            '(' if !in_str => depth += 1,
            ')' if !in_str => depth -= 1,
            c if c == sep && !in_str && depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

/// One asm statement's parenthesised body as a C++ block.
fn asm_as_cpp(body: &str) -> String {
    let parts = split_top(body, ':');
    assert!(
        (2..=3).contains(&parts.len()),
        "field.cuh: asm with clobbers or no outputs: {body}"
    );
    // The template: adjacent string literals.
    let template: String = parts[0].split('"').skip(1).step_by(2).collect();
    let operands = |p: Option<&&str>| -> Vec<(String, String)> {
        let Some(p) = p.filter(|p| !p.trim().is_empty()) else {
            return Vec::new();
        };
        split_top(p, ',')
            .into_iter()
            .map(|o| {
                let o = o.trim();
                let close = o[1..].find('"').expect("operand constraint") + 1;
                let cons = o[1..close].to_string();
                let expr = o[close + 1..].trim();
                assert!(
                    expr.starts_with('(') && expr.ends_with(')'),
                    "field.cuh operand {o}"
                );
                (cons, expr.to_string())
            })
            .collect()
    };
    let outs = operands(parts.get(1));
    let ins = operands(parts.get(2));
    let mut b = String::from("{ ");
    for (k, (cons, expr)) in outs.iter().chain(&ins).enumerate() {
        match cons.as_str() {
            "=r" => b += &format!("uint32_t _p{k} = 0xDEADBEEFu; "),
            "+r" | "r" => b += &format!("uint32_t _p{k} = (uint32_t){expr}; "),
            c => panic!("field.cuh: asm constraint {c:?} has no emulation"),
        }
    }
    let operand = |x: &str| -> String {
        let x = x.trim();
        if let Some(n) = x.strip_prefix('%') {
            let n: usize = n.parse().unwrap_or_else(|_| panic!("PTX operand {x}"));
            assert!(
                n < outs.len() + ins.len(),
                "PTX operand {x} out of range in {template}"
            );
            format!("_p{n}")
        } else {
            let v: u32 = x
                .parse()
                .unwrap_or_else(|_| panic!("PTX operand {x} in {template}"));
            format!("{v}u")
        }
    };
    for instr in template.split(';').map(str::trim).filter(|i| !i.is_empty()) {
        let (op, args) = instr
            .split_once(char::is_whitespace)
            .expect("PTX instruction operands");
        let args: Vec<String> = args.split(',').map(operand).collect();
        let parts: Vec<&str> = op.split('.').collect();
        let cout = parts.contains(&"cc");
        assert_eq!(
            parts.last(),
            Some(&"u32"),
            "PTX `{instr}`: only .u32 is emulated"
        );
        let half = |what: &str| match parts.get(1) {
            Some(&"lo") => "false",
            Some(&"hi") => "true",
            _ => panic!("PTX `{instr}`: {what} needs .lo or .hi"),
        };
        let call = match parts[0] {
            "add" | "addc" | "sub" | "subc" => {
                assert_eq!(args.len(), 3, "PTX `{instr}`");
                assert_eq!(parts.len(), if cout { 3 } else { 2 }, "PTX `{instr}`");
                let f = if parts[0].starts_with("add") {
                    "emu_ptx_add"
                } else {
                    "emu_ptx_sub"
                };
                let cin = parts[0].ends_with('c');
                format!("{f}({}, {}, {cin}, {cout})", args[1], args[2])
            }
            "mul" => {
                assert!(args.len() == 3 && parts.len() == 3, "PTX `{instr}`");
                format!(
                    "emu_ptx_mad({}, {}, {}, 0u, false, false)",
                    half("mul"),
                    args[1],
                    args[2]
                )
            }
            "mad" | "madc" => {
                assert_eq!(args.len(), 4, "PTX `{instr}`");
                assert_eq!(parts.len(), if cout { 4 } else { 3 }, "PTX `{instr}`");
                format!(
                    "emu_ptx_mad({}, {}, {}, {}, {}, {cout})",
                    half("mad"),
                    args[1],
                    args[2],
                    args[3],
                    parts[0] == "madc"
                )
            }
            _ => panic!("PTX `{instr}` has no emulation (tests/common's ptx_as_cpp)"),
        };
        assert!(args[0].starts_with("_p"), "PTX `{instr}`: destination");
        b += &format!("{} = {call}; ", args[0]);
    }
    for (k, (cons, expr)) in outs.iter().enumerate() {
        assert!(cons != "r", "field.cuh: an input among the outputs");
        b += &format!("{expr} = _p{k}; ");
    }
    b.push('}');
    b
}
