#include "server/daemon.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <filesystem>
#include <system_error>

#include "server/broker/broker_clock.h"
#include "server/service/rpc_metrics.h"

namespace fairq::server {
namespace {

// Turns the writer may hold (applied or not, unsynced) before the
// dispatcher waits for it.
constexpr size_t kMaxTurnsInFlight = 64;

// A reload's command is answered on the dispatcher's or the writer's
// thread, long after SIGHUP's handling: a refusal is logged there. `tenant`
// names the tenant a command was for, if any.
Done LogIfRefused(std::string what, std::string tenant = "") {
  return [what = std::move(what),
          tenant = std::move(tenant)](const Status& status) {
    if (status.ok()) return;
    const std::string msg = "reload: " + what + " refused";
    if (tenant.empty()) {
      logging::Log(spdlog::level::err, msg, {{"error", status.ToString()}});
    } else {
      logging::Log(spdlog::level::err, msg,
                   {{"tenant", tenant}, {"error", status.ToString()}});
    }
  };
}

}  // namespace

StatusOr<std::unique_ptr<Daemon>> Daemon::Start(
    const config::DaemonConfig& config) {
  std::unique_ptr<Daemon> daemon(new Daemon());
  if (!config.metrics_listen.empty()) {
    daemon->metrics_ = std::make_shared<metrics::PrometheusMetrics>(
        metrics::PrometheusOptions{
            .max_tenant_series = config.metrics.max_tenant_series,
            .rpc_methods = ServedRpcMethods()});
  }
  FAIRQ_RETURN_IF_ERROR(daemon->Open(config));
  FAIRQ_RETURN_IF_ERROR(daemon->ServeMetrics(config));
  FAIRQ_RETURN_IF_ERROR(daemon->Serve(config));
  return daemon;
}

Daemon::~Daemon() { Shutdown(); }

metrics::Metrics& Daemon::metrics() {
  return metrics_ ? *metrics_ : metrics::NoMetrics();
}

Status Daemon::Open(const config::DaemonConfig& config) {
  std::error_code error;
  std::filesystem::create_directories(config.data_dir, error);
  if (error) {
    return Unavailable("data_dir: cannot create " + config.data_dir + ": " +
                       error.message());
  }
  auto store = store::Store::Open({config.data_dir, config.sync, nullptr});
  if (!store.ok()) return store.status();
  store_ = std::move(store).value();
  auto broker = Broker::Create(config, store_.get(), metrics());
  if (!broker.ok()) return broker.status();
  // This thread restores, reading every record, and then only waits.
  store::DisablePerfCountersOnThisThread();
  Turn restore(store_->NewBatch());
  FAIRQ_RETURN_IF_ERROR((*broker)->Restore(NowUnixMs(), restore));
  std::vector<store::WriteBatch> batches;
  batches.push_back(std::move(restore.batch));
  FAIRQ_RETURN_IF_ERROR(store_->Commit(batches));
  spdlog::info("restored {} live jobs from {}", (*broker)->live_jobs(),
               config.data_dir);
  writer_ = std::make_unique<Writer>(
      store_.get(), kMaxTurnsInFlight,
      std::chrono::microseconds(config.effective_sync_interval_us()),
      metrics());
  writer_->Start();
  dispatcher_ = std::make_unique<Dispatcher>(
      std::move(broker).value(), writer_.get(), store_.get(),
      config.command_queue_capacity, metrics());
  return Status::Ok();
}

// Scrapes reach the broker the way RPCs do: a command through the
// dispatcher's queue, answered on its thread.
Status Daemon::ServeMetrics(const config::DaemonConfig& config) {
  if (!metrics_) return Status::Ok();
  Dispatcher* dispatcher = dispatcher_.get();
  const store::Store* store = store_.get();
  metrics_->SetSources(
      {[dispatcher](metrics::SnapshotVisitor visit,
                    std::function<void()> finished) {
         dispatcher->Post(MetricsSnapshotCommand{
             std::move(visit),
             [finished = std::move(finished)](const Status&) { finished(); }});
       },
       [dispatcher] { return uint64_t{dispatcher->queue_depth()}; },
       [store] { return store->failed(); }});
  auto exporter =
      metrics::MetricsExporter::Start(config.metrics_listen, metrics_);
  if (!exporter.ok()) return exporter.status();
  exporter_ = std::move(exporter).value();
  return Status::Ok();
}

Status Daemon::Serve(const config::DaemonConfig& config) {
  ServiceContext context{
      dispatcher_.get(),
      store_.get(),
      {config.max_payload_bytes, config.max_batch, config.max_spec_bytes()}};
  producer_ = std::make_unique<ProducerService>(context);
  worker_ = std::make_unique<WorkerService>(context);
  admin_ = std::make_unique<AdminService>(context);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  // gRPC sets SO_REUSEPORT by default, which lets a second fairqd bind the
  // same port and silently take half the clients: refuse that instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Calls the dispatcher has not read yet wait in gRPC's memory; this
  // bounds them per connection (gRPC's default is unbounded), and a
  // client's further calls wait on its side.
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, 1024);
  builder.AddListeningPort(config.listen, grpc::InsecureServerCredentials(),
                           &port_);
  // A batch of max_batch of the largest specs, and room for the call's own
  // fields; gRPC refuses a larger message before it is parsed into memory.
  builder.SetMaxReceiveMessageSize(static_cast<int>(std::min<uint64_t>(
      INT_MAX, config.max_batch * config.max_spec_bytes() + (64 << 10))));
  builder.RegisterService(producer_->service());
  builder.RegisterService(worker_->service());
  builder.RegisterService(admin_->service());
  builder.RegisterAsyncGenericService(health_.service());
  calls_ = std::make_unique<CallLoop>(builder.AddCompletionQueue());
  producer_->ServeOn(*calls_);
  worker_->ServeOn(*calls_);
  admin_->ServeOn(*calls_);
  if (metrics_) {
    std::vector<std::unique_ptr<
        grpc::experimental::ServerInterceptorFactoryInterface>>
        interceptors;
    interceptors.push_back(std::make_unique<RpcMetricsFactory>(*metrics_));
    builder.experimental().SetInterceptorCreators(std::move(interceptors));
  }
  server_ = builder.BuildAndStart();
  if (!server_ || port_ == 0) {
    return Unavailable("listen: cannot serve gRPC on " + config.listen);
  }
  calls_->Start();
  health_.Start(calls_->queue());
  dispatcher_->Start(calls_.get());
  return Status::Ok();
}

void Daemon::ReloadSettings(const config::DaemonConfig& config) {
  std::vector<SetTenantCommand> tenants;
  for (const v1::Tenant& tenant : config.tenants) {
    auto settings = std::make_shared<v1::Tenant>(tenant);
    auto result = std::make_shared<v1::Tenant>();
    // The command points into `settings` and `result`: they live as long
    // as its answer.
    Done log = LogIfRefused("tenant settings", tenant.name());
    tenants.push_back(SetTenantCommand{
        settings.get(), result.get(),
        [settings, result, log = std::move(log)](const Status& status) {
          log(status);
        },
        /*from_config=*/true});
  }
  Done done = [orgs = config.orgs.size(), pools = config.pools.size(),
               count = tenants.size()](const Status& status) {
    if (!status.ok()) {
      logging::Log(spdlog::level::err, "reload failed",
                   {{"error", status.ToString()}});
      return;
    }
    spdlog::info("reloaded {} organisations, {} pools and {} tenant settings",
                 orgs, pools, count);
  };
  dispatcher_->Post(
      ReloadCommand{std::make_unique<ReloadCommand::Parts>(ReloadCommand::Parts{
                        .orgs = {config.orgs, LogIfRefused("organisations")},
                        .pools = {config.pools, LogIfRefused("pools")},
                        .tenants = std::move(tenants),
                    }),
                    std::move(done)});
}

void Daemon::Shutdown() {
  if (stopped_) return;
  stopped_ = true;
  health_.SetServing(false);
  if (dispatcher_) dispatcher_->Stop();  // new calls now get UNAVAILABLE
  if (calls_) calls_->Drain();           // from here on, on a thread of its own
  if (writer_) writer_->Stop();          // every reply has been sent
  // Every call has been answered by now; what is left are idle client
  // connections, which gRPC would otherwise wait for until the deadline.
  if (server_) {
    server_->Shutdown(std::chrono::system_clock::now() +
                      std::chrono::milliseconds(200));
  }
  if (calls_) calls_->Shutdown();
  exporter_.reset();
  store_.reset();
}

}  // namespace fairq::server
