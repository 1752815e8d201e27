//! The controller's answers against a Java 5.3.3 controller's captured frames.
