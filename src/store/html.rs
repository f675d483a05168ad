//! The report page: one self-contained HTML file. Its style and script are
//! inline and compiled into witness; its data is one inline JSON block.
//! A Content-Security-Policy allows exactly that style and that script (by
//! their SHA-256) and nothing else, so the page makes no network request
//! and runs from `file://` with no server.

use sha2::{Digest, Sha256};

const SCRIPT: &str = include_str!("report/report.js");
const STYLE: &str = include_str!("report/report.css");

/// Standard base64 with padding, as CSP hash sources are written.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn hash(text: &str) -> String {
    format!("'sha256-{}'", base64(&Sha256::digest(text.as_bytes())))
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The page for `data` (the report's JSON document), titled `title`.
pub fn page(title: &str, data: &serde_json::Value) -> String {
    // `<` never appears raw inside the data block, so no text in it can
    // close the script element.
    let json = serde_json::to_string(data)
        .expect("JSON values serialise")
        .replace('<', "\\u003c");
    let policy = format!(
        "default-src 'none'; script-src {}; style-src {}; img-src data:; base-uri 'none'; form-action 'none'",
        hash(SCRIPT),
        hash(STYLE)
    );
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{policy}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{} \u{2014} witness report</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <noscript>This report draws its tables and charts with its own inline script; allow scripts for this file to see them.</noscript>\n\
         <pre id=\"problems\" hidden></pre>\n<div id=\"app\"></div>\n\
         <script type=\"application/json\" id=\"witness-data\">{json}</script>\n\
         <script>{SCRIPT}</script>\n</body>\n</html>\n",
        escape(title)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard_alphabet_and_padding() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        // The SHA-256 of the empty string, as CSP writes it.
        assert_eq!(
            hash(""),
            "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"
        );
    }

    #[test]
    fn the_data_cannot_close_its_script_element() {
        let page = page(
            "a <b>",
            &serde_json::json!({ "x": "</script><script>alert(1)" }),
        );
        assert!(!page.contains("</script><script>alert"));
        assert!(page.contains("<title>a &lt;b&gt; \u{2014} witness report</title>"));
    }
}
