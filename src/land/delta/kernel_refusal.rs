//! PURE. The Delta kernel's refusals of a table's protocol as Wharf says them (CONTRACT.md
//! §12.8): [`kernel_error`] tells a protocol refusal from a store error, and
//! [`in_wharfs_words`] names the version or feature the table needs and what Wharf
//! supports, as a `table_feature` refusal (exit 3), never the kernel's own text alone
//! nor advice about endpoints and credentials.

use super::features::{ANOTHER, rule_of};
use crate::error::Error;
use crate::plan::TableFeatureRefusal;
use crate::store::objects::scrub;

/// A kernel error met reading or committing: a protocol or feature refusal the kernel
/// raised is [`Error::TableFeature`] in Wharf's words, never a store error with advice
/// about endpoints and credentials; any other is `otherwise`'s.
pub fn kernel_error(
    url: &str,
    e: delta_kernel::KernelError,
    otherwise: impl FnOnce(delta_kernel::KernelError) -> Error,
) -> Error {
    if !is_protocol(&e) {
        return otherwise(e);
    }
    Error::TableFeature {
        url: url.to_owned(),
        refusal: in_wharfs_words(&e),
    }
}

/// The kernel's refusal of a protocol as Wharf says it: which version or feature the
/// table needs and which Wharf supports. The kernel names a version or a feature in its
/// message; one Wharf cannot place is quoted under the feature `protocol`.
pub(super) fn in_wharfs_words(e: &delta_kernel::KernelError) -> TableFeatureRefusal {
    use delta_kernel::table_features::{MAX_VALID_READER_VERSION, MAX_VALID_WRITER_VERSION};
    let text = e.to_string();
    let number = |after: &str| -> Option<i64> {
        let rest = &text[text.find(after)? + after.len()..];
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    };
    let newer = "land with the Delta writer that upgraded the table, or publish to another \
                 table (a new publish_root path, where the first landing creates one)";
    let version = |side: &str, needed: i64, max: i32| TableFeatureRefusal {
        feature: format!("{side}Version"),
        detail: format!(
            "the table's protocol needs {side} version {needed}; Wharf's Delta kernel supports \
             {side} versions 1 to {max}"
        ),
        fix: newer.to_owned(),
    };
    if let Some(needed) = number("minimum reader version ") {
        return version("reader", needed, MAX_VALID_READER_VERSION);
    }
    if let Some(needed) = number("minimum writer version ") {
        return version("writer", needed, MAX_VALID_WRITER_VERSION);
    }
    let quoted = text
        .split_once("Feature '")
        .and_then(|(_, rest)| rest.split_once('\''))
        .map(|(name, _)| name.to_owned());
    match quoted.as_deref().map(|name| (name, rule_of(name))) {
        Some((name, None)) => unknown(name),
        Some((name, Some(rule))) => TableFeatureRefusal {
            feature: name.to_owned(),
            detail: "the Delta kernel Wharf commits with does not support it on this table".into(),
            fix: if rule.fix.is_empty() {
                ANOTHER
            } else {
                rule.fix
            }
            .to_owned(),
        },
        None => TableFeatureRefusal {
            feature: "protocol".into(),
            detail: format!(
                "Wharf's Delta kernel cannot read or write the table's protocol: {}",
                scrub(&text)
            ),
            fix: newer.to_owned(),
        },
    }
}

/// Whether the kernel refused the table's protocol or features (not its storage).
fn is_protocol(e: &delta_kernel::KernelError) -> bool {
    use delta_kernel::KernelError as K;
    match e {
        K::Unsupported(_) | K::InvalidProtocol(_) | K::InvalidColumnMappingMode(_) => true,
        K::InvalidTransactionState(m) => m.starts_with("Append-only"),
        K::Backtraced { source, .. } => is_protocol(source),
        _ => false,
    }
}

/// The refusal of a feature Wharf does not know.
pub(super) fn unknown(name: &str) -> TableFeatureRefusal {
    TableFeatureRefusal {
        feature: name.to_owned(),
        detail: "a feature Wharf does not know, added by a newer or another vendor's Delta \
                 writer"
            .into(),
        fix: ANOTHER.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_protocol_error_of_the_kernel_is_a_refusal_without_the_s3_hint() {
        use delta_kernel::KernelError as K;
        let store = |e: K| Error::Table {
            url: "u".into(),
            action: "commit the landing",
            detail: e.to_string(),
            hint: crate::store::objects::HINT.into(),
        };
        for e in [
            K::Unsupported("Feature 'checkConstraints' is not supported".into()),
            K::InvalidProtocol("min_writer_version".into()),
            K::InvalidTransactionState("Append-only tables cannot remove files".into()),
        ] {
            let error = kernel_error("file:///t/", e, store);
            assert!(matches!(error, Error::TableFeature { .. }), "{error}");
            assert_eq!(error.exit_code(), crate::exit::REFUSED);
            assert!(!error.to_string().contains("AWS_"), "{error}");
        }
        let io = kernel_error("file:///t/", K::Generic("connection reset".into()), store);
        assert!(io.to_string().contains("AWS_ENDPOINT_URL"), "{io}");
    }

    #[test]
    fn the_kernels_refusal_is_said_in_wharfs_words() {
        use delta_kernel::KernelError as K;
        let said = |e: K| in_wharfs_words(&e);
        let reader = said(K::unsupported("Unsupported minimum reader version 99"));
        assert_eq!(reader.feature, "readerVersion");
        assert!(
            reader.detail.contains("needs reader version 99"),
            "{reader}"
        );
        assert!(reader.detail.contains("reader versions 1 to 3"), "{reader}");
        let writer = said(K::unsupported("Unsupported minimum writer version 8"));
        assert_eq!(writer.feature, "writerVersion");
        assert!(writer.detail.contains("writer versions 1 to 7"), "{writer}");
        let unknown = said(K::unsupported(
            "Feature 'someFutureReading' is not supported",
        ));
        assert_eq!(unknown.feature, "someFutureReading");
        assert!(unknown.detail.contains("a feature Wharf does not know"));
        let known = said(K::unsupported("Feature 'typeWidening' is not supported"));
        assert_eq!(known.feature, "typeWidening");
        assert_eq!(known.fix, ANOTHER);
        let other = said(K::InvalidProtocol(
            "reader features without version 3".into(),
        ));
        assert_eq!(other.feature, "protocol");
        for refusal in [reader, writer, unknown, known, other] {
            assert!(!refusal.to_string().contains('\n'), "{refusal}");
        }
    }
}
