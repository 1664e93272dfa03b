//! What `#[derive(Equivalence)]` refuses, with the compiler's message for each (trybuild):
//! enums, unions, packed structs, references, pointers, structs without fields or with a
//! lifetime, fields of a type that is not `Equivalence`, a predefined reduction on a derived
//! struct of mixed fields, and `#[equivalence(elementwise)]` on mixed fields, on a struct with
//! padding, or with an option it does not know.

#[cfg(feature = "derive")]
#[test]
fn derive_refusals() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/derive_refusals/*.rs");
}
