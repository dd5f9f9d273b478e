//! Generates the gRPC code from proto/cuzk_daemon.proto with a vendored
//! protoc, so building needs no system protobuf compiler.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    std::env::set_var("PROTOC", protoc);
    println!("cargo:rerun-if-changed=proto/cuzk_daemon.proto");
    tonic_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_protos(&["proto/cuzk_daemon.proto"], &["proto"])?;
    Ok(())
}
