//! Prints every volume of an array as one JSON object per line, streaming page by
//! page so that arrays with hundreds of thousands of volumes need little memory.
//!
//! ```text
//! PUREFA_URL=array1.example.com PUREFA_API=<token> [PUREFA_CA_FILE=ca.pem] \
//!     cargo run -p flasharray --example list_volumes > volumes.jsonl
//! ```
//!
//! The token is read from the environment only, never from the command line, so it
//! does not show up in the process list or shell history.

use std::io::Write;

use futures_util::StreamExt;
use secrecy::SecretString;

use flasharray::{FlashArray, ListParams, RestArray};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("PUREFA_URL").map_err(|_| "PUREFA_URL is not set")?;
    let token = std::env::var("PUREFA_API").map_err(|_| "PUREFA_API is not set")?;
    let mut builder = RestArray::builder(url).api_token(SecretString::from(token));
    if let Ok(ca) = std::env::var("PUREFA_CA_FILE") {
        builder = builder.ca_file(ca);
    }
    let array = builder.build()?;

    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut volumes = array.volume_stream(ListParams::all());
    let mut result = Ok(());
    while let Some(item) = volumes.next().await {
        match item {
            Ok(v) => {
                serde_json::to_writer(&mut out, &v)?;
                out.write_all(b"\n")?;
            }
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    drop(volumes);
    out.flush()?;
    // Log out even when listing failed, then report the listing error.
    let closed = array.close().await;
    result?;
    closed?;
    Ok(())
}
