//! Array-wide settings that `PATCH /arrays` changes: the array's name and the
//! eradication delay. The delay is read wherever destroyed objects are timed
//! (`time_remaining`, the sweep that eradicates them), so a change applies to
//! objects already destroyed too, as their time remaining is computed from it.

use flasharray::Result;

use crate::MockArray;
use crate::state::bad;

/// The shortest and longest eradication delay an array accepts (1 to 30 days).
pub(crate) const ERADICATION_DELAY_RANGE_MS: std::ops::RangeInclusive<u64> =
    86_400_000..=30 * 86_400_000;

/// What one `PATCH /arrays` changes; `None` leaves a setting as it is.
#[derive(Debug, Default)]
pub struct ArraySettings {
    /// The new array name.
    pub name: Option<String>,
    /// The new eradication delay in force (`enabled_delay`), ms.
    pub eradication_delay_ms: Option<u64>,
    /// The new `disabled_delay` (the delay under SafeMode), ms.
    pub disabled_delay_ms: Option<u64>,
}

/// Array names: 1-56 letters, digits and `-`, starting with a letter or digit and
/// not ending with `-` (Purity's rule for the array name).
fn valid_array_name(name: &str) -> bool {
    (1..=56).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
        && !name.ends_with('-')
}

impl MockArray {
    /// The array's id and current name, for the simulator's `context` field: read
    /// directly rather than through `get_array`, whose space totals walk every
    /// volume and whose call counts and injected latency belong to the client's
    /// own calls.
    pub fn identity(&self) -> (String, String) {
        let state = self.lock();
        (state.array.id.clone(), state.array.name.clone())
    }

    /// The eradication delays, ms: (`enabled_delay`, the one in force;
    /// `disabled_delay`, the one under SafeMode).
    pub fn eradication_delays(&self) -> (u64, u64) {
        let state = self.lock();
        let enabled = state.array.eradication_delay_ms;
        (
            enabled,
            state.array.eradication_disabled_delay_ms.unwrap_or(enabled),
        )
    }

    /// Applies `settings` after checking all of them, so a refused patch changes
    /// nothing.
    pub fn patch_array_settings(&self, settings: &ArraySettings) -> Result<()> {
        if let Some(name) = &settings.name
            && !valid_array_name(name)
        {
            return Err(bad(name, "Invalid array name."));
        }
        for (field, delay) in [
            ("eradication_delay", settings.eradication_delay_ms),
            ("disabled_delay", settings.disabled_delay_ms),
        ] {
            if let Some(delay) = delay
                && !ERADICATION_DELAY_RANGE_MS.contains(&delay)
            {
                return Err(bad(
                    field,
                    "Eradication delay must be between 1 and 30 days.",
                ));
            }
        }
        let mut state = self.lock();
        if let Some(name) = &settings.name {
            state.array.name = name.clone();
        }
        if let Some(delay) = settings.eradication_delay_ms {
            state.array.eradication_delay_ms = delay;
        }
        if let Some(delay) = settings.disabled_delay_ms {
            state.array.eradication_disabled_delay_ms = Some(delay);
        }
        drop(state);
        self.changed();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flasharray::FlashArray;

    #[tokio::test]
    async fn name_and_delay_change_and_bad_values_change_nothing() {
        let mock = MockArray::new();
        mock.patch_array_settings(&ArraySettings {
            name: Some("fa-renamed".into()),
            eradication_delay_ms: Some(2 * 86_400_000),
            disabled_delay_ms: Some(5 * 86_400_000),
        })
        .unwrap();
        let info = mock.get_array().await.unwrap();
        assert_eq!(info.name, "fa-renamed");
        assert_eq!(
            info.eradication_config.eradication_delay,
            Some(2 * 86_400_000)
        );
        for bad in [
            ArraySettings {
                name: Some("-x".into()),
                eradication_delay_ms: Some(86_400_000),
                disabled_delay_ms: None,
            },
            ArraySettings {
                name: Some("ok".into()),
                eradication_delay_ms: Some(1000),
                disabled_delay_ms: None,
            },
            ArraySettings {
                name: None,
                eradication_delay_ms: None,
                disabled_delay_ms: Some(31 * 86_400_000),
            },
        ] {
            assert!(mock.patch_array_settings(&bad).is_err());
        }
        let info = mock.get_array().await.unwrap();
        assert_eq!(info.name, "fa-renamed");
        assert_eq!(
            info.eradication_config.eradication_delay,
            Some(2 * 86_400_000)
        );
        assert_eq!(mock.eradication_delays(), (2 * 86_400_000, 5 * 86_400_000));
    }
}
