package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pkiFiles are the paths of the certificates and keys in the state folder.
type pkiFiles struct {
	CACert, CAKey           string
	ServingCert, ServingKey string
	AdminCert, AdminKey     string
	SAKey, SAPublic         string
}

// adminUser is the harness's identity: a client certificate in system:masters.
const (
	adminUser  = "pxfa-test-admin"
	adminGroup = "system:masters"
	validity   = 10 * 365 * 24 * time.Hour
)

func pkiIn(dir string) pkiFiles {
	p := func(name string) string { return filepath.Join(dir, name) }
	return pkiFiles{
		CACert: p("ca.crt"), CAKey: p("ca.key"),
		ServingCert: p("apiserver.crt"), ServingKey: p("apiserver.key"),
		AdminCert: p("admin.crt"), AdminKey: p("admin.key"),
		SAKey: p("sa.key"), SAPublic: p("sa.pub"),
	}
}

// ensurePKI makes the CA, the serving and admin certificates and the ServiceAccount
// signing key once; a restart on the same folder reuses them.
func ensurePKI(dir string) (pkiFiles, error) {
	files := pkiIn(dir)
	if _, err := os.Stat(files.SAPublic); err == nil {
		return files, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return files, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return files, err
	}
	ca, caKey, err := makeCA(files)
	if err != nil {
		return files, err
	}
	serving := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if err := issue(serving, ca, caKey, files.ServingCert, files.ServingKey); err != nil {
		return files, err
	}
	admin := &x509.Certificate{
		Subject:     pkix.Name{CommonName: adminUser, Organization: []string{adminGroup}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if err := issue(admin, ca, caKey, files.AdminCert, files.AdminKey); err != nil {
		return files, err
	}
	return files, makeSAKey(files)
}

func makeCA(files pkiFiles) (*x509.Certificate, crypto.Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "pxfa-test-ca"},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := sign(tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	if err := writePEM(files.CACert, "CERTIFICATE", der); err != nil {
		return nil, nil, err
	}
	return ca, key, writeKey(files.CAKey, key)
}

func issue(tmpl, ca *x509.Certificate, caKey crypto.Signer, certPath, keyPath string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := sign(tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	if err := writePEM(certPath, "CERTIFICATE", der); err != nil {
		return err
	}
	return writeKey(keyPath, key)
}

func sign(tmpl, parent *x509.Certificate, pub crypto.PublicKey, signer crypto.Signer) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(validity)
	return x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
}

func makeSAKey(files pkiFiles) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	if err := writeKey(files.SAKey, key); err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	// Written last: its presence says the whole set is there.
	return writePEM(files.SAPublic, "PUBLIC KEY", pub)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "EC PRIVATE KEY", der)
}

func writePEM(path, kind string, der []byte) error {
	return writeSecretFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}))
}

// writeSecretFile writes a new file readable by its owner only.
func writeSecretFile(path string, data []byte) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
