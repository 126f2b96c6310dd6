//! The JSON-RPC surface: methods, shapes, errors.
