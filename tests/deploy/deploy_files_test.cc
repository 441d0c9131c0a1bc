// Checks the files under deploy/ that no tool here can run: every YAML
// document parses; the PrometheusRule carries exactly the groups of
// deploy/prometheus/alerts.yaml; the container config is one fairqd accepts;
// and the Kubernetes manifests, Dockerfile and config agree on ports, paths,
// names and the user id.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "server/config/daemon_config.h"

namespace {

namespace fs = std::filesystem;

const fs::path kSource = FAIRQ_SOURCE_DIR;
const fs::path kDeploy = kSource / "deploy";
const fs::path kKubernetes = kDeploy / "kubernetes";

// Every document of `path`; a parse error fails the calling test.
std::vector<YAML::Node> LoadAll(const fs::path& path) {
  try {
    return YAML::LoadAllFromFile(path.string());
  } catch (const YAML::Exception& e) {
    ADD_FAILURE() << path << ": " << e.what();
    return {};
  }
}

YAML::Node LoadOne(const fs::path& path) {
  std::vector<YAML::Node> docs = LoadAll(path);
  EXPECT_EQ(docs.size(), 1u) << path;
  return docs.empty() ? YAML::Node() : docs.front();
}

// Structural equality: same kinds, scalars, sequence order and mapping keys.
// Comments and quoting style do not count.
bool SameTree(const YAML::Node& a, const YAML::Node& b) {
  if (a.Type() != b.Type()) return false;
  switch (a.Type()) {
    case YAML::NodeType::Scalar:
      return a.Scalar() == b.Scalar();
    case YAML::NodeType::Sequence:
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i) {
        if (!SameTree(a[i], b[i])) return false;
      }
      return true;
    case YAML::NodeType::Map:
      if (a.size() != b.size()) return false;
      for (const auto& entry : a) {
        const YAML::Node other = b[entry.first.Scalar()];
        if (!other.IsDefined() || !SameTree(entry.second, other)) return false;
      }
      return true;
    default:
      return true;  // both null or both undefined
  }
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The port of a "host:port" address.
std::string PortOf(const std::string& address) {
  return address.substr(address.rfind(':') + 1);
}

// The container of the fairq StatefulSet.
YAML::Node FairqdContainer(const YAML::Node& statefulset) {
  return statefulset["spec"]["template"]["spec"]["containers"][0];
}

TEST(DeployFilesTest, EveryYamlDocumentParses) {
  std::set<std::string> seen;
  for (const auto& entry : fs::recursive_directory_iterator(kDeploy)) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".yaml" && ext != ".yml") continue;
    seen.insert(fs::relative(entry.path(), kDeploy).string());
    std::vector<YAML::Node> docs = LoadAll(entry.path());
    EXPECT_FALSE(docs.empty()) << entry.path() << " has no document";
    for (const YAML::Node& doc : docs) {
      EXPECT_TRUE(doc.IsMap()) << entry.path() << ": a document is not a mapping";
    }
  }
  // The walk found the files (a wrong root would pass vacuously).
  for (const char* file : {"prometheus/alerts.yaml", "prometheus/prometheus.yml",
                           "kubernetes/statefulset.yaml", "kubernetes/kustomization.yaml",
                           "grafana/provisioning/dashboards/fairq.yaml"}) {
    EXPECT_TRUE(seen.count(file)) << file << " not found under " << kDeploy;
  }
}

TEST(DeployFilesTest, KubernetesManifestsNameTheirKind) {
  const YAML::Node kustomization = LoadOne(kKubernetes / "kustomization.yaml");
  ASSERT_TRUE(kustomization["resources"].IsSequence());
  for (const YAML::Node& resource : kustomization["resources"]) {
    for (const YAML::Node& doc : LoadAll(kKubernetes / resource.as<std::string>())) {
      EXPECT_TRUE(doc["apiVersion"].IsScalar()) << resource;
      EXPECT_TRUE(doc["kind"].IsScalar()) << resource;
      EXPECT_TRUE(doc["metadata"]["name"].IsScalar()) << resource;
    }
  }
}

TEST(DeployFilesTest, PrometheusRuleHasTheAlertFileGroups) {
  const YAML::Node alerts = LoadOne(kDeploy / "prometheus" / "alerts.yaml");
  const YAML::Node rule = LoadOne(kKubernetes / "prometheus-rule.yaml");
  EXPECT_EQ(rule["kind"].as<std::string>(""), "PrometheusRule");
  ASSERT_TRUE(alerts["groups"].IsSequence());
  EXPECT_GE(alerts["groups"].size(), 1u);
  EXPECT_TRUE(SameTree(alerts["groups"], rule["spec"]["groups"]))
      << "deploy/kubernetes/prometheus-rule.yaml differs from "
         "deploy/prometheus/alerts.yaml: run deploy/sync.sh";
}

TEST(DeployFilesTest, ContainerConfigLoadsAndServesEveryInterface) {
  auto config = fairq::config::LoadConfig((kKubernetes / "fairqd.yaml").string());
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->listen, "0.0.0.0:7070");
  EXPECT_EQ(config->metrics_listen, "0.0.0.0:9464");
  EXPECT_EQ(config->data_dir, "/var/lib/fairq");
}

TEST(DeployFilesTest, ManifestsAgreeWithTheConfig) {
  auto config = fairq::config::LoadConfig((kKubernetes / "fairqd.yaml").string());
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const YAML::Node statefulset = LoadOne(kKubernetes / "statefulset.yaml");
  const YAML::Node service = LoadOne(kKubernetes / "service.yaml");
  const YAML::Node monitor = LoadOne(kKubernetes / "servicemonitor.yaml");
  const YAML::Node kustomization = LoadOne(kKubernetes / "kustomization.yaml");
  const YAML::Node container = FairqdContainer(statefulset);

  std::map<std::string, std::string> ports;  // container port name -> number
  for (const YAML::Node& port : container["ports"]) {
    ports[port["name"].as<std::string>()] = port["containerPort"].as<std::string>();
  }
  EXPECT_EQ(ports["grpc"], PortOf(config->listen));
  EXPECT_EQ(ports["metrics"], PortOf(config->metrics_listen));
  for (const char* probe : {"startupProbe", "readinessProbe", "livenessProbe"}) {
    EXPECT_EQ(container[probe]["grpc"]["port"].as<std::string>(""), ports["grpc"]) << probe;
  }

  // The data volume is mounted where the config keeps its data, and the
  // ConfigMap the pod mounts is the one kustomize generates.
  std::map<std::string, std::string> mounts;  // volume name -> path
  for (const YAML::Node& mount : container["volumeMounts"]) {
    mounts[mount["name"].as<std::string>()] = mount["mountPath"].as<std::string>();
  }
  EXPECT_EQ(mounts[statefulset["spec"]["volumeClaimTemplates"][0]["metadata"]["name"]
                       .as<std::string>()],
            config->data_dir);
  EXPECT_EQ(kustomization["configMapGenerator"][0]["name"].as<std::string>(""),
            statefulset["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"]
                .as<std::string>(""));

  // The Service is the StatefulSet's, named "fairq": the Prometheus Operator
  // makes that the job label the alerts select on.
  EXPECT_EQ(service["metadata"]["name"].as<std::string>(""), "fairq");
  EXPECT_EQ(statefulset["spec"]["serviceName"].as<std::string>(""), "fairq");
  for (const auto& label : service["spec"]["selector"]) {
    EXPECT_EQ(statefulset["spec"]["template"]["metadata"]["labels"]
                  [label.first.as<std::string>()].as<std::string>(""),
              label.second.as<std::string>());
  }
  std::set<std::string> service_ports;
  for (const YAML::Node& port : service["spec"]["ports"]) {
    service_ports.insert(port["name"].as<std::string>());
    EXPECT_EQ(port["port"].as<std::string>(), ports[port["targetPort"].as<std::string>()]);
  }
  EXPECT_TRUE(service_ports.count(monitor["spec"]["endpoints"][0]["port"].as<std::string>("")));
}

TEST(DeployFilesTest, ImageUserIsThePodUser) {
  std::smatch match;
  const std::string dockerfile = ReadFile(kDeploy / "Dockerfile");
  ASSERT_TRUE(std::regex_search(dockerfile, match, std::regex(R"(\nUSER (\d+):(\d+)\n)")));
  const YAML::Node security =
      LoadOne(kKubernetes / "statefulset.yaml")["spec"]["template"]["spec"]["securityContext"];
  EXPECT_EQ(security["runAsUser"].as<std::string>(""), match[1].str());
  EXPECT_EQ(security["runAsGroup"].as<std::string>(""), match[2].str());
  EXPECT_TRUE(security["runAsNonRoot"].as<bool>(false));
}

}  // namespace
