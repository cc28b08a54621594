//! Tests of the synthesiser against object's and gimli's readers.
