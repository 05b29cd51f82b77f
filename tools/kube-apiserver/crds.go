package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

const (
	readyMarker  = "ready"
	failedMarker = "failed"
	readyTimeout = 180 * time.Second
	crdTimeout   = 120 * time.Second
	pollEvery    = 500 * time.Millisecond
)

var crdResource = schema.GroupVersionResource{
	Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions",
}

// prepare waits for the API server, loads the CRDs and writes the marker the start
// script waits for: "ready", or "failed" with the reason (and the process exits).
func prepare(dir, kubeconfig string, crdPaths []string) {
	err := loadCRDs(kubeconfig, crdPaths)
	if err != nil {
		_ = os.WriteFile(filepath.Join(dir, failedMarker), []byte(err.Error()+"\n"), 0o600)
		fmt.Fprintf(os.Stderr, "pxfa-kube-apiserver: %v\n", err)
		os.Exit(1)
	}
	_ = os.WriteFile(filepath.Join(dir, readyMarker), []byte("ok\n"), 0o600)
}

func loadCRDs(kubeconfig string, crdPaths []string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 100, 200
	if err := waitReady(cfg); err != nil {
		return err
	}
	docs, err := readCRDs(crdPaths)
	if err != nil {
		return err
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), crdTimeout)
	defer cancel()
	crds := client.Resource(crdResource)
	for _, crd := range docs {
		_, err := crds.Apply(ctx, crd.GetName(), crd, metav1.ApplyOptions{FieldManager: "pxfa-kube-apiserver", Force: true})
		if err != nil {
			return fmt.Errorf("CRD %s: %w", crd.GetName(), err)
		}
	}
	for _, crd := range docs {
		if err := waitEstablished(ctx, crds, crd.GetName()); err != nil {
			return err
		}
	}
	return nil
}

// waitReady polls /readyz with the admin identity until it answers ok.
func waitReady(cfg *rest.Config) error {
	clients, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(readyTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		body, err := clients.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		cancel()
		if err == nil && string(body) == "ok" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("API server not ready after %s: %v", readyTimeout, err)
		}
		time.Sleep(pollEvery)
	}
}

func waitEstablished(ctx context.Context, crds dynamic.NamespaceableResourceInterface, name string) error {
	for {
		obj, err := crds.Get(ctx, name, metav1.GetOptions{})
		if err == nil && conditionTrue(obj, "Established") {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRD %s not Established within %s (last error: %v)", name, crdTimeout, err)
		case <-time.After(pollEvery):
		}
	}
}

func conditionTrue(obj *unstructured.Unstructured, kind string) bool {
	conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conditions {
		m, ok := c.(map[string]interface{})
		if ok && m["type"] == kind && m["status"] == "True" {
			return true
		}
	}
	return false
}

// readCRDs reads every YAML document of the given files and folders (a folder's *.yaml,
// not its subfolders); each must be a CustomResourceDefinition.
func readCRDs(paths []string) ([]*unstructured.Unstructured, error) {
	var crds []*unstructured.Unstructured
	for _, path := range paths {
		files, err := yamlFiles(path)
		if err != nil {
			return nil, err
		}
		for _, file := range files {
			docs, err := readDocs(file)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			crds = append(crds, docs...)
		}
	}
	return crds, nil
}

func yamlFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	files, err := filepath.Glob(filepath.Join(path, "*.yaml"))
	sort.Strings(files)
	return files, err
}

func readDocs(file string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var crds []*unstructured.Unstructured
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return crds, nil
		}
		if err != nil {
			return nil, err
		}
		obj := map[string]interface{}{}
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return nil, err
		}
		if len(obj) == 0 {
			continue
		}
		crd := &unstructured.Unstructured{Object: obj}
		if crd.GetKind() != "CustomResourceDefinition" || !strings.HasPrefix(crd.GetAPIVersion(), "apiextensions.k8s.io/") {
			return nil, fmt.Errorf("a %s %q is not a CustomResourceDefinition", crd.GetKind(), crd.GetName())
		}
		crds = append(crds, crd)
	}
}
