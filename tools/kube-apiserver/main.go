// Command pxfa-kube-apiserver runs etcd (embedded) and kube-apiserver in one process, on
// loopback only, for pxfa's tests against a real API server (scripts/kube-apiserver.sh).
//
// Everything it makes lives in -dir: certificates and keys (mode 0600), etcd's data, the
// admin kubeconfig, and the marker file "ready" once the CRDs given with -crds are
// Established ("failed" with the reason if they are not). Started again on the same -dir
// it keeps its data, ports and keys, so a kubeconfig written before a stop still works.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	// A flag set of its own: kube-apiserver's command registers klog's flags globally.
	fs := flag.NewFlagSet("pxfa-kube-apiserver", flag.ExitOnError)
	dir := fs.String("dir", "", "state folder (created when missing)")
	var crds stringList
	fs.Var(&crds, "crds", "a CRD file, or a folder whose *.yaml are CRDs (repeatable)")
	watchPid := fs.Int("watch-pid", 0, "stop when this process ends (a test binary that started the server)")
	_ = fs.Parse(os.Args[1:])
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "pxfa-kube-apiserver: -dir is required")
		os.Exit(2)
	}
	if *watchPid > 0 {
		go stopWhenGone(*watchPid)
	}
	err := run(*dir, crds)
	if watchedGone.Load() {
		// The folder was that process's throwaway: nothing else will remove it.
		_ = os.RemoveAll(*dir)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "pxfa-kube-apiserver: %v\n", err)
		os.Exit(1)
	}
}

// watchedGone is set once the -watch-pid process has ended.
var watchedGone atomic.Bool

func run(dir string, crdPaths []string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, marker := range []string{readyMarker, failedMarker} {
		if err := os.Remove(filepath.Join(dir, marker)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	pki, err := ensurePKI(filepath.Join(dir, "pki"))
	if err != nil {
		return fmt.Errorf("certificates: %w", err)
	}
	ports, err := ensurePorts(filepath.Join(dir, "ports.json"))
	if err != nil {
		return fmt.Errorf("ports: %w", err)
	}
	kubeconfig := filepath.Join(dir, "admin.kubeconfig")
	if err := writeKubeconfig(kubeconfig, ports.APIServer, pki); err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	etcd, err := startEtcd(filepath.Join(dir, "etcd"), ports)
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	defer etcd.Close()
	go exitOnEtcdError(etcd)
	go prepare(dir, kubeconfig, crdPaths)

	cmd := app.NewAPIServerCommand()
	cmd.SetArgs(apiserverArgs(pki, ports))
	return cmd.Execute()
}

// apiserverArgs configures kube-apiserver as a cluster runs it: client certificates and
// ServiceAccount tokens (TokenRequest) for authentication, Node and RBAC authorization,
// the default admission chain. Only loopback is bound.
func apiserverArgs(pki pkiFiles, ports portSet) []string {
	return []string{
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", ports.APIServer),
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", ports.EtcdClient),
		"--tls-cert-file=" + pki.ServingCert,
		"--tls-private-key-file=" + pki.ServingKey,
		"--client-ca-file=" + pki.CACert,
		"--authorization-mode=Node,RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + pki.SAPublic,
		"--service-account-signing-key-file=" + pki.SAKey,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--allow-privileged=true",
		// The "kubernetes" Service's Endpoints would name 127.0.0.1, which validation
		// refuses for Endpoints; no test reaches the API server through that Service.
		"--endpoint-reconciler-type=none",
		"--profiling=false",
	}
}

// stopWhenGone sends this process SIGTERM (kube-apiserver's graceful shutdown, then etcd
// closes) once pid no longer exists: a test binary cannot stop a server it shares
// between its tests, since nothing runs when it exits.
func stopWhenGone(pid int) {
	for syscall.Kill(pid, 0) == nil {
		time.Sleep(time.Second)
	}
	fmt.Fprintf(os.Stderr, "pxfa-kube-apiserver: process %d ended, stopping\n", pid)
	watchedGone.Store(true)
	_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
}
