//! The test broker's requests against a Java 5.3.3 broker's captured ones.
