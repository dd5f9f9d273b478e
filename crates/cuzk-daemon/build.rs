//! Generates the gRPC code of the daemon's own service
//! (proto/cuzk_daemon.proto) and of Curio's `cuzk.v1.ProvingEngine`
//! (proto/cuzk/v1/proving.proto) with a vendored protoc, so building needs
//! no system protobuf compiler.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    std::env::set_var("PROTOC", protoc);
    println!("cargo:rerun-if-changed=proto/cuzk_daemon.proto");
    println!("cargo:rerun-if-changed=proto/cuzk/v1/proving.proto");
    tonic_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_protos(
            &["proto/cuzk_daemon.proto", "proto/cuzk/v1/proving.proto"],
            &["proto"],
        )?;
    Ok(())
}
