package main

import "crypto/tls"

// loadPair checks the certificate and key before listening.
func loadPair(cert, key string) (tls.Certificate, error) { return tls.LoadX509KeyPair(cert, key) }
