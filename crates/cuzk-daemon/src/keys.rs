//! `cuzk.daemon.v1.KeyService`: the verifying key of a circuit kind's
//! parameters, so that the daemon's proofs can be checked by anyone with
//! `cuzk verify` (the parameter manager owns the keys; this only encodes
//! them). Registered beside ProofService by `server::serve_until_signal`, on the
//! same listeners and behind the same bearer-token rule.

// tonic::Status is large, but it is what every handler returns.
#![allow(clippy::result_large_err)]

use crate::engine::{Engine, EngineError};
use crate::proto;
use crate::server::ServiceHook;
use std::sync::Arc;
use tonic::{Request, Response, Status};

pub struct KeyServiceImpl {
    engine: Engine,
}

/// The hook that adds the key service to a daemon's routes.
pub fn service_hook() -> ServiceHook {
    Arc::new(
        |engine: &Engine, _cluster, rb: &mut tonic::service::RoutesBuilder| {
            rb.add_service(proto::key_service_server::KeyServiceServer::new(
                KeyServiceImpl {
                    engine: engine.clone(),
                },
            ));
        },
    )
}

#[tonic::async_trait]
impl proto::key_service_server::KeyService for KeyServiceImpl {
    async fn get_verifying_key(
        &self,
        req: Request<proto::GetVerifyingKeyRequest>,
    ) -> Result<Response<proto::GetVerifyingKeyResponse>, Status> {
        let name = req.into_inner().kind;
        let status = |e: EngineError| crate::service::status_of(e);
        let kind = self
            .engine
            .registry()
            .get(&name)
            .map_err(|e| status(e.into()))?;
        let (vk, public_inputs) = self
            .engine
            .params()
            .verifying_key(&kind)
            .await
            .map_err(|e| status(e.into()))?;
        Ok(Response::new(proto::GetVerifyingKeyResponse {
            vk,
            params_id: kind.params_id().to_owned(),
            public_inputs,
        }))
    }
}
