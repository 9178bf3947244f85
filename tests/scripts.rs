//! The scripts: a tarball is installed only when its checksum matches, the installer says when
//! its directory is not on PATH, the release ships the licence, and the live-mode client runs
//! its conversation.

use std::process::Command;

use crate::util::{read, TestDir};

fn sh(dir: &TestDir, script: &str) -> std::process::Output {
    Command::new("sh").arg("-c").arg(script).current_dir(dir.path("work")).output().unwrap()
}

#[test]
fn install_verifies_the_checksum() {
    let dir = TestDir::new("install");
    let install = format!("{}/scripts/install.sh", env!("CARGO_MANIFEST_DIR"));
    dir.write("work/zero-9.9.9-test/zero", "#!/bin/sh\necho zero 9.9.9\n");
    let made = sh(&dir, "chmod +x zero-9.9.9-test/zero && tar -czf zero-9.9.9-test.tar.gz zero-9.9.9-test && sha256sum zero-9.9.9-test.tar.gz > SHA256SUMS");
    assert!(made.status.success(), "{made:?}");
    let good = sh(&dir, &format!("PREFIX=$PWD/prefix sh {install} $PWD/zero-9.9.9-test.tar.gz"));
    assert!(good.status.success(), "{good:?}");
    assert!(String::from_utf8_lossy(&good.stdout).contains("(zero 9.9.9)"));
    let prefix_bin = dir.path("work/prefix/bin");
    assert_eq!(
        String::from_utf8_lossy(&good.stderr),
        format!("install: warning: {b} is not on PATH; add it (export PATH=\"{b}:$PATH\") or run {b}/zero\n", b = prefix_bin.display())
    );
    // On PATH: no warning.
    let again = sh(&dir, &format!("PATH=$PWD/prefix/bin:$PATH PREFIX=$PWD/prefix sh {install} $PWD/zero-9.9.9-test.tar.gz"));
    assert!(again.status.success(), "{again:?}");
    assert_eq!(String::from_utf8_lossy(&again.stderr), "");
    assert_eq!(read(&dir.path("work/prefix/bin/zero")), "#!/bin/sh\necho zero 9.9.9\n");
    // One byte more, and the tarball is refused with nothing installed.
    let bad = sh(&dir, &format!("printf x >> zero-9.9.9-test.tar.gz && PREFIX=$PWD/other sh {install} $PWD/zero-9.9.9-test.tar.gz"));
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("checksum mismatch"), "{bad:?}");
    assert!(!dir.path("work/other").exists());
    let unlisted = sh(&dir, &format!("cp zero-9.9.9-test.tar.gz renamed.tar.gz && PREFIX=$PWD/other sh {install} $PWD/renamed.tar.gz"));
    assert_eq!(unlisted.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unlisted.stderr).contains("not listed in SHA256SUMS"));
}

#[test]
fn the_release_tarball_carries_the_mit_licence_cargo_toml_declares() {
    let root = env!("CARGO_MANIFEST_DIR");
    let release = read(std::path::Path::new(&format!("{root}/scripts/release.sh")));
    assert!(release.contains(r#"cp "$binary" README.md LICENSE "$stage/$name/""#));
    let licence = read(std::path::Path::new(&format!("{root}/LICENSE")));
    assert!(licence.starts_with("MIT License\n"));
    let manifest = read(std::path::Path::new(&format!("{root}/Cargo.toml")));
    assert!(manifest.contains("license = \"MIT\""));
}

#[test]
fn the_live_client_runs_two_turns_with_one_approval() {
    let root = env!("CARGO_MANIFEST_DIR");
    let run = Command::new("python3")
        .arg(format!("{root}/scripts/live_client.py"))
        .args(["--zero", env!("CARGO_BIN_EXE_zero")])
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .output();
    let Ok(run) = run else {
        crate::util::skip("live client", crate::util::Skip::Missing, "python3 is not installed");
        return;
    };
    assert!(run.status.success(), "{run:?}");
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        "> Write a note that says to remember the milk.\n\
         [approval] write_file (write) -> allow\n\
         [tool] write_file ok\n\
         < I wrote notes.txt.\n\
         > What does the note say?\n\
         [tool] read_file ok\n\
         < It says: remember the milk.\n\
         [end] success, exit 0, 19 lines\n\
         notes.txt: remember the milk\n"
    );
}
