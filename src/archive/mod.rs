//! Importing cuDNN archives (DESIGN.md §3): recognise the shape by its entry
//! names, plan the mapping to the store layout, check every entry, extract
//! while hashing, read the version from the headers, cross-check the name.
