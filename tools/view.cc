// myriad view: serves the replay viewer and one replay file over HTTP (Boost.Beast) on
// loopback, or writes one self-contained HTML page (--html).
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/core/detail/base64.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <thread>

#include "myriad/replay.h"
#include "tools/commands.h"
#include "tools/viewer_assets.h"

namespace myriad::tools {
namespace {

namespace http = boost::beast::http;
using tcp = boost::asio::ip::tcp;

struct ViewOptions {
  std::string file, host = "127.0.0.1", html;
  int port = 8765;
};

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot read " + path);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

std::string content_type(const std::string& name) {
  auto ends = [&](const char* ext) {
    const std::string e(ext);
    return name.size() >= e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0;
  };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  return "application/octet-stream";
}

std::string asset_or_throw(const std::string& name) {
  auto a = viewer_asset(name);
  if (!a)
    throw std::runtime_error("the viewer file " + name +
                             " is missing from this build (install Debian's libjs-three and "
                             "libjs-chart.js, then reconfigure and rebuild)");
  return *a;
}

// JS made safe to inline: "</script" (any case) would end the element early and "<!--" can
// change how the HTML parser reads it; "<\/" and "<\!--" mean the same inside JS strings and
// regular expressions, the only places valid code can hold them.
std::string script_safe(std::string js) {
  for (size_t k = 0; (k = js.find('<', k)) != std::string::npos; ++k) {
    std::string next = js.substr(k + 1, 7);
    std::transform(next.begin(), next.end(), next.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (next == "/script" || next.rfind("!--", 0) == 0) js.insert(k + 1, "\\");
  }
  return js;
}

// Inlines the page's scripts and stylesheet, and puts the replay (base64) in its placeholder.
std::string single_page(const std::string& replay_bytes) {
  std::istringstream in(asset_or_throw("index.html"));
  std::ostringstream out;
  const std::string script_open = "<script src=\"", script_close = "\"></script>";
  const std::string style_link = "<link rel=\"stylesheet\" href=\"style.css\">";
  const std::string placeholder =
      "<script id=\"myriad-replay\" type=\"application/octet-stream\"></script>";
  for (std::string line; std::getline(in, line);) {
    const size_t s = line.find(script_open), l = line.find(style_link), p = line.find(placeholder);
    if (s != std::string::npos && line.find(script_close, s) != std::string::npos) {
      const size_t begin = s + script_open.size();
      std::string js = asset_or_throw(line.substr(begin, line.find('"', begin) - begin));
      out << line.substr(0, s) << "<script>\n" << script_safe(js) << "\n</script>\n";
    } else if (l != std::string::npos) {
      out << line.substr(0, l) << "<style>\n" << asset_or_throw("style.css") << "\n</style>\n";
    } else if (p != std::string::npos) {
      std::string b64(boost::beast::detail::base64::encoded_size(replay_bytes.size()), '\0');
      b64.resize(boost::beast::detail::base64::encode(b64.data(), replay_bytes.data(),
                                                      replay_bytes.size()));
      out << line.substr(0, p) << "<script id=\"myriad-replay\" type=\"application/octet-stream\">"
          << b64 << "</script>\n";
    } else {
      out << line << "\n";
    }
  }
  return out.str();
}

void answer_requests(tcp::socket& socket, const std::string& replay_path) {
  // Blocking reads give up after 30 s of silence (Beast's own timeouts are for async I/O).
  const timeval quiet{30, 0};
  setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &quiet, sizeof quiet);
  boost::beast::flat_buffer buffer;
  boost::beast::error_code ec;
  for (;;) {
    http::request<http::string_body> req;
    http::read(socket, buffer, req, ec);
    if (ec) break;
    http::response<http::string_body> res;
    res.version(req.version());
    res.keep_alive(req.keep_alive());
    res.set(http::field::server, "myriad view");
    res.set(http::field::cache_control, "no-store");
    std::string target(req.target());
    target = target.substr(0, target.find('?'));
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
      res.result(http::status::method_not_allowed);
      res.body() = "only GET and HEAD\n";
    } else if (target == "/replay") {
      try {
        res.body() = read_bytes(replay_path);
        res.set(http::field::content_type, "application/octet-stream");
      } catch (const std::exception& e) {
        res.result(http::status::not_found);
        res.body() = std::string(e.what()) + "\n";
      }
    } else if (auto asset = viewer_asset(target == "/" ? "index.html" : target.substr(1))) {
      res.body() = std::move(*asset);
      res.set(http::field::content_type, content_type(target == "/" ? ".html" : target));
    } else {
      res.result(http::status::not_found);
      res.body() = "not found: " + target + "\n";
    }
    res.prepare_payload();
    if (req.method() == http::verb::head) res.body().clear();
    http::write(socket, res, ec);
    if (ec || !res.keep_alive()) break;
  }
}

// Connections served at once; more are closed at once (a browser opens about six).
constexpr int kMaxConnections = 32;
std::atomic<int> live_connections{0};

// One connection: answers GET/HEAD until the browser closes it or goes quiet for 30 s.
void serve_connection(tcp::socket socket, const std::string& replay_path) {
  try {
    answer_requests(socket, replay_path);
  } catch (const std::exception&) {
    // A broken request or connection ends this connection only, never the server.
  }
  boost::beast::error_code ec;
  socket.shutdown(tcp::socket::shutdown_send, ec);
  --live_connections;
}

void run_view(ViewOptions o) {
  if (std::filesystem::is_directory(o.file)) {
    const std::string in_run = (std::filesystem::path(o.file) / "eval.replay").string();
    if (!std::filesystem::is_regular_file(in_run))
      throw std::invalid_argument(o.file +
                                  " is a folder without eval.replay (train with "
                                  "eval.record=true, or record with myriad eval --record)");
    o.file = in_run;
  }
  for (const char* name :
       {"index.html", "vendor/three.min.js", "vendor/OrbitControls.js", "vendor/chart.min.js"})
    asset_or_throw(name);
  // Check the file first, so a bad one is reported here rather than only on the page.
  // decode allocates no more than the file can hold (docs/replay-format.md, memory bound).
  const std::string bytes = read_bytes(o.file);
  const replay::Replay r = replay::decode(std::vector<uint8_t>(bytes.begin(), bytes.end()), o.file);
  // The reader checked num_envs and num_frames (integers when present); env may be anything.
  const auto text = [&](const char* key, const std::string& otherwise) {
    if (!r.header.contains(key)) return otherwise;
    const nlohmann::json& v = r.header[key];
    return v.is_string() ? v.get<std::string>() : v.dump().substr(0, 80);
  };
  const std::string summary = text("env", "?") + ", " + text("num_envs", "0") + " env(s), " +
                              text("num_frames", "0") + " frames";
  if (!o.html.empty()) {
    const std::string page = single_page(bytes);
    std::ofstream f(o.html, std::ios::binary);
    f << page;
    if (!f.flush()) throw std::runtime_error("cannot write " + o.html);
    std::cout << "myriad view: wrote " << o.html << " (" << summary << ", " << page.size() / 1024
              << " KiB, self-contained)" << std::endl;
    return;
  }
  boost::asio::io_context io;
  boost::system::error_code ec;
  const auto address = boost::asio::ip::make_address(o.host, ec);
  if (ec) throw std::invalid_argument("--host: '" + o.host + "' is not an IP address");
  tcp::acceptor acceptor(io);
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(o.port));
  acceptor.open(endpoint.protocol());
  acceptor.set_option(tcp::acceptor::reuse_address(true));
  acceptor.bind(endpoint, ec);
  if (ec)
    throw std::runtime_error("cannot listen on " + o.host + ":" + std::to_string(o.port) + " (" +
                             ec.message() + "); pass --port 0 for a free port");
  acceptor.listen();
  const std::string host = address.is_v6() ? "[" + o.host + "]" : o.host;
  std::cout << "myriad view: " << o.file << " (" << summary << ")\n"
            << "serving http://" << host << ":" << acceptor.local_endpoint().port()
            << "/ (Ctrl-C to stop)" << std::endl;
  for (;;) {
    tcp::socket socket(io);
    acceptor.accept(socket, ec);
    if (ec) {  // e.g. out of file descriptors: wait rather than spin
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    if (live_connections >= kMaxConnections) continue;  // closes it
    ++live_connections;
    std::thread(serve_connection, std::move(socket), o.file).detach();
  }
}

}  // namespace

void add_view_command(CLI::App& app) {
  auto o = std::make_shared<ViewOptions>();
  CLI::App* cmd = app.add_subcommand("view", "Watch a replay in the browser viewer");
  cmd->add_option("file", o->file,
                  "Replay file (myriad eval --record), or a run folder (its eval.replay)")
      ->required()
      ->check(CLI::ExistingPath);
  cmd->add_option("--port", o->port, "Port (0: any free port)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--host", o->host, "Address to listen on (loopback unless you say otherwise)")
      ->capture_default_str();
  cmd->add_option("--html", o->html, "Write one self-contained page here instead of serving");
  cmd->callback([o] { run_view(*o); });
}

}  // namespace myriad::tools
