//! The warnings the program prints (`tracing::warn!`, shown on standard error as
//! `warning: ...`) also go into the event stream, when one is open.

use super::{Event, Warning, stream};
use std::fmt::Write;
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::Context;

/// A layer of the log that writes each warning as a `warning` event.
pub struct WarningLayer;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for WarningLayer {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        if *event.metadata().level() != tracing::Level::WARN || !stream::is_open() {
            return;
        }
        let mut text = Text(String::new());
        event.record(&mut text);
        stream::emit(&Event::Warning(Warning {
            message: crate::record::clean_message(&text.0).into_owned(),
        }));
    }
}

/// The message, then any other field as ` name=value`, as the printed line says them.
struct Text(String);

impl Visit for Text {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        } else {
            let _ = write!(self.0, " {}={value}", field.name());
        }
    }
}
