//! What a time-stamp authority sends back (RFC 3161), and the tokens signatures keep: the
//! console's own TSP reader (`signing::tsp`, written with `der`), from the whole answer to
//! the token's signature and the TSA's certificate chain.
#![no_main]
use libfuzzer_sys::fuzz_target;
use signing::alg::DigestAlg;
use signing::tsp;

/// The CA of the seed responses (fuzz/seeds/tsa_response), so the chain check is reached.
const CA: &[u8] = include_bytes!("../fixtures/tsa-ca-ec.pem");
/// The data the seed tokens stamp.
const STAMPED: &[u8] = b"signature value";

fuzz_target!(|data: &[u8]| {
    let ca = tsp::load_ca(CA).expect("the fixture CA parses");
    // A whole answer, against a request as the console sends it (its nonce is random, so
    // a granted answer is refused for the nonce at the latest — after every other check).
    let req = tsp::request(DigestAlg::Sha256, STAMPED).expect("a request");
    let _ = tsp::check_response(data, &req, Some(&ca));
    let _ = tsp::check_response(data, &req, None);
    // A token kept in a CMS attribute or a bundle, against the bytes it stamps.
    let with_ca = tsp::verify_token_for(data, STAMPED, Some(&ca));
    let without = tsp::verify_token_for(data, STAMPED, None);
    // A CA only adds a check: what passes with it passes without it.
    if with_ca.is_ok() {
        assert!(without.is_ok(), "a token valid with the CA fails without it");
    }
    let _ = tsp::load_ca(data);
});
