//! Structured JSON log lines (`pxfa controller run --log-format json`): one object
//! per line with `timestamp`, `level`, `target`, `message`, the event's fields and
//! the names of the spans it is in, for log collectors that parse JSON.
//!
//! A formatter for tracing-subscriber's `fmt` layer rather than its `json` feature,
//! which would pull in another crate for a few lines. It writes only what the code
//! logged: secrets stay out because nothing logs them (tokens are `SecretString`,
//! whose Debug is redacted, and the CLI keeps HTTP libraries at `warn`).

use std::fmt;

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// The JSON line format.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonLines;

struct Fields(Map<String, Value>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), Value::from(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().to_string(), Value::from(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_string(), Value::from(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().to_string(), Value::from(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().to_string(), Value::from(value));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0
            .insert(field.name().to_string(), Value::from(format!("{value:?}")));
    }
}

impl<S, N> FormatEvent<S, N> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let meta = event.metadata();
        let mut fields = Fields(Map::new());
        event.record(&mut fields);
        let mut line = Map::new();
        line.insert(
            "timestamp".into(),
            Value::from(k8s_openapi::jiff::Timestamp::now().to_string()),
        );
        line.insert("level".into(), Value::from(meta.level().as_str()));
        line.insert("target".into(), Value::from(meta.target()));
        if let Some(message) = fields.0.remove("message") {
            line.insert("message".into(), message);
        }
        if !fields.0.is_empty() {
            line.insert("fields".into(), Value::Object(fields.0));
        }
        if let Some(scope) = ctx.event_scope() {
            let spans: Vec<Value> = scope.from_root().map(|s| Value::from(s.name())).collect();
            line.insert("spans".into(), Value::Array(spans));
        }
        let text = serde_json::to_string(&Value::Object(line)).map_err(|_| fmt::Error)?;
        writeln!(writer, "{text}")
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    use super::*;

    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);

    impl Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn one_json_object_per_line() {
        let buf = Buf::default();
        let w = buf.clone();
        let sub = tracing_subscriber::fmt()
            .event_format(JsonLines)
            .with_writer(move || w.clone())
            .finish();
        tracing::subscriber::with_default(sub, || {
            let span = tracing::info_span!("reconcile");
            let _g = span.enter();
            tracing::info!(
                object = "pxfa/t1",
                elapsed_ms = 12u64,
                ok = true,
                "reconciled"
            );
        });
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        let line: Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(line["level"], "INFO");
        assert_eq!(line["message"], "reconciled");
        assert_eq!(line["fields"]["object"], "pxfa/t1");
        assert_eq!(line["fields"]["elapsed_ms"], 12);
        assert_eq!(line["fields"]["ok"], true);
        assert_eq!(line["spans"], serde_json::json!(["reconcile"]));
    }
}
