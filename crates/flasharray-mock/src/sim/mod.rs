//! HTTPS simulator of the FlashArray REST API.
