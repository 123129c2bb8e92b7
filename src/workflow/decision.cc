#include "workflow/decision.h"

#include <fmt/format.h>

#include <cstdlib>
#include <lua.hpp>
#include <nlohmann/json.hpp>

namespace elasticjob::workflow {

namespace {

struct Budget {
  size_t used = 0;
};

void* BoundedAlloc(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto* budget = static_cast<Budget*>(ud);
  if (ptr == nullptr) osize = 0;
  if (nsize == 0) {
    std::free(ptr);
    budget->used -= osize;
    return nullptr;
  }
  if (nsize > osize && budget->used + (nsize - osize) > kDecisionMemory) return nullptr;
  void* p = std::realloc(ptr, nsize);
  if (p != nullptr) budget->used = budget->used - osize + nsize;
  return p;
}

void InstructionHook(lua_State* L, lua_Debug*) {
  luaL_error(L, "the expression ran more than %d instructions",
             static_cast<int>(kDecisionInstructions));
}

void PushJson(lua_State* L, const nlohmann::json& j, int depth) {
  if (depth > 64) {
    lua_pushnil(L);
    return;
  }
  if (j.is_object()) {
    lua_createtable(L, 0, static_cast<int>(j.size()));
    for (const auto& [k, v] : j.items()) {
      lua_pushlstring(L, k.data(), k.size());
      PushJson(L, v, depth + 1);
      lua_rawset(L, -3);
    }
  } else if (j.is_array()) {
    lua_createtable(L, static_cast<int>(j.size()), 0);
    lua_Integer i = 1;
    for (const auto& v : j) {
      PushJson(L, v, depth + 1);
      lua_rawseti(L, -2, i++);
    }
  } else if (j.is_boolean()) {
    lua_pushboolean(L, j.get<bool>() ? 1 : 0);
  } else if (j.is_number_integer()) {
    lua_pushinteger(L, j.get<lua_Integer>());
  } else if (j.is_number()) {
    lua_pushnumber(L, j.get<double>());
  } else if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    lua_pushlstring(L, s.data(), s.size());
  } else {
    lua_pushnil(L);
  }
}

int Protected(lua_State* L) {
  // Only the libraries that reach nothing outside the state.
  luaL_requiref(L, LUA_GNAME, luaopen_base, 1);
  luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
  luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
  luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
  luaL_requiref(L, LUA_UTF8LIBNAME, luaopen_utf8, 1);
  lua_settop(L, 0);
  for (const char* name :
       {"dofile", "loadfile", "load", "require", "collectgarbage", "print", "rawequal", "rawget",
        "rawset", "rawlen", "setmetatable", "getmetatable"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  // string.rep builds big strings cheaply: bounded by the allocator anyway.
  return 0;
}

}  // namespace

Result<std::string> EvaluateDecision(std::string_view expression, std::string_view context_json) {
  nlohmann::json ctx = nlohmann::json::parse(context_json, nullptr, false);
  if (ctx.is_discarded() || !ctx.is_object()) ctx = nlohmann::json::object();
  Budget budget;
  lua_State* L = lua_newstate(BoundedAlloc, &budget);
  if (L == nullptr) return Internal("decision: cannot create a Lua state");
  struct Closer {
    lua_State* L;
    ~Closer() { lua_close(L); }
  } closer{L};
  lua_pushcfunction(L, Protected);
  if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
    std::string why = lua_tostring(L, -1) != nullptr ? lua_tostring(L, -1) : "?";
    return Internal(fmt::format("decision: opening the sandbox: {}", why));
  }
  PushJson(L, ctx, 0);
  lua_setglobal(L, "ctx");
  const std::string chunk = "return (" + std::string(expression) + "\n)";
  // Text only ("t"): no precompiled chunks.
  if (luaL_loadbufferx(L, chunk.data(), chunk.size(), "=expression", "t") != LUA_OK) {
    std::string why = lua_tostring(L, -1) != nullptr ? lua_tostring(L, -1) : "?";
    return InvalidArgument(fmt::format("decision: '{}': {}", expression, why));
  }
  lua_sethook(L, InstructionHook, LUA_MASKCOUNT, static_cast<int>(kDecisionInstructions));
  if (lua_pcall(L, 0, 1, 0) != LUA_OK) {
    std::string why = lua_tostring(L, -1) != nullptr ? lua_tostring(L, -1) : "out of memory";
    return InvalidArgument(fmt::format("decision: '{}': {}", expression, why));
  }
  switch (lua_type(L, -1)) {
    case LUA_TBOOLEAN:
      return std::string(lua_toboolean(L, -1) != 0 ? "true" : "false");
    case LUA_TNIL:
      return std::string("nil");
    case LUA_TNUMBER:
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, -1, &len);
      return std::string(s, len);
    }
    default:
      return InvalidArgument(
          fmt::format("decision: '{}': a {} is not a decision (expected a "
                      "boolean, number or string)",
                      expression, luaL_typename(L, -1)));
  }
}

}  // namespace elasticjob::workflow
