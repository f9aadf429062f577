//! Codec JSON against numcodecs (Python): our JSON is accepted by `numcodecs.get_codec`, a
//! chunk numcodecs encodes decodes with our pipeline, and a chunk we encode decodes with
//! numcodecs. Skips when python3 or numcodecs is missing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code

use nc_filters::codec_json::{codec_to_hdf5, hdf5_to_codec};
use nc_filters::{parse_spec_list, FilterContext, Registry};
use std::process::Command;

const SCRIPT: &str = r#"
import sys, json, numcodecs, numpy as np
codec = numcodecs.get_codec(json.loads(sys.argv[1]))
data = open(sys.argv[2], 'rb').read()
ours = open(sys.argv[3], 'rb').read()
back = bytes(codec.decode(ours))
theirs = codec.encode(np.frombuffer(data, dtype='u1'))
open(sys.argv[4], 'wb').write(bytes(theirs))
print(json.dumps(codec.get_config(), sort_keys=True))
print('OK' if back == data else 'MISMATCH')
"#;

fn numcodecs_available() -> bool {
    Command::new("python3")
        .args(["-c", "import numcodecs, numpy"])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn standard_codecs_interoperate_with_numcodecs() {
    if !numcodecs_available() {
        eprintln!("skipping: python3 with numcodecs is not available");
        return;
    }
    let dir = std::env::temp_dir().join(format!("ncf-numcodecs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let r = Registry::with_builtins();
    let ctx = FilterContext::new(4, &[40, 50]);
    let n = ctx.chunk_bytes().unwrap();
    let data: Vec<u8> = (0..n / 4)
        .flat_map(|i| ((i as f32 * 0.1).sin() * 1000.0).to_le_bytes())
        .collect();
    for chain in [
        "1,5",
        "2",
        "3",
        "307,9",
        "32015,3",
        "32001,0,0,0,0,5,1,1",
        "32001,0,0,0,0,7,1,5",
        "32001,0,0,0,0,5,0,4",
        "32001,0,0,0,0,5,1,0",
        "32001,0,0,0,0,5,2,1",
    ] {
        let spec = parse_spec_list(chain).unwrap().remove(0);
        let wspec = r.working_chain(std::slice::from_ref(&spec), &ctx).remove(0);
        let json = hdf5_to_codec(&wspec, &ctx).unwrap();
        // our JSON maps back to the same filter
        assert_eq!(
            codec_to_hdf5(&json, &ctx).unwrap().unwrap(),
            wspec,
            "{chain}"
        );
        let p = r
            .pipeline(std::slice::from_ref(&wspec), ctx.clone())
            .unwrap();
        let ours = p.encode(&data).unwrap();
        let (d, o, t) = (dir.join("data"), dir.join("ours"), dir.join("theirs"));
        std::fs::write(&d, &data).unwrap();
        std::fs::write(&o, &ours).unwrap();
        let out = Command::new("python3")
            .args(["-c", SCRIPT, &json.to_string()])
            .args([&d, &o, &t])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{chain}: numcodecs failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("{chain}: {json} -> numcodecs {stdout}");
        assert_eq!(
            stdout.lines().last(),
            Some("OK"),
            "{chain}: numcodecs decoding ours"
        );
        let theirs = std::fs::read(&t).unwrap();
        assert_eq!(
            p.decode(&theirs).unwrap(),
            data,
            "{chain}: decoding numcodecs' chunk"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
