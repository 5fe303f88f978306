# NixOS module for seam's gate. Its options mirror the policy file (seam policy show):
#
#   services.seam = {
#     enable = true;
#     user = "alice";
#     package = pkgs.seam;            # however seam is packaged on the machine
#     policy = {
#       capabilities."python.run" = "allow";
#       filesystem.read = [ "~" ];
#       filesystem.write = [ "~/project" ];
#       filesystem.protected = [ "~/secrets" ];
#       taint.egress = "deny";
#     };
#   };
#
# The policy is rendered to a TOML file in the store and given to the gate with --policy;
# `seam policy show --policy <that file>` prints it as enforced. A list left null keeps the
# policy's default; a list that is set replaces it (protected entries only add to the
# built-in list, which no file can shrink).
{ config, lib, pkgs, ... }:

let
  cfg = config.services.seam;
  inherit (lib) mkOption mkEnableOption mkIf types;

  decision = types.enum [ "allow" "ask" "deny" ];
  capabilityNames = [
    "filesystem.read"
    "filesystem.write"
    "self.modify"
    "python.run"
    "web.search"
    "web.fetch"
    "memory"
    "facts"
  ];

  nonNull = lib.filterAttrs (_: v: v != null);
  policyAttrs = lib.filterAttrs (_: v: v != { }) {
    capabilities = nonNull cfg.policy.capabilities;
    filesystem = nonNull {
      inherit (cfg.policy.filesystem) read write;
      protected = if cfg.policy.filesystem.protected == [ ] then null else cfg.policy.filesystem.protected;
    };
    taint = nonNull { inherit (cfg.policy.taint) egress; };
  };
  policyFile = (pkgs.formats.toml { }).generate "seam-policy.toml" policyAttrs;
  seamHome = if cfg.home != null then cfg.home else "${config.users.users.${cfg.user}.home}/.local/share/seam";
in
{
  options.services.seam = {
    enable = mkEnableOption "seam's gate (the governed tools behind a policy and a signed ledger)";

    package = mkOption {
      type = types.package;
      description = "The package that provides bin/seam.";
    };

    user = mkOption {
      type = types.str;
      description = "The owner the gate works for: it reads this user's files, under the policy.";
    };

    home = mkOption {
      type = types.nullOr types.str;
      default = null;
      description = "seam's home (default: ~/.local/share/seam of the user).";
    };

    extraWritePaths = mkOption {
      type = types.listOf types.str;
      default = [ ];
      description = "Absolute directories the service may write besides seam's home (those of policy.filesystem.write, expanded).";
    };

    policy = {
      capabilities = lib.genAttrs capabilityNames (name: mkOption {
        type = types.nullOr (if name == "python.run" then types.enum [ "allow" "ask" "deny" "allow-unsandboxed" ] else decision);
        default = null;
        description = "The decision for ${name} (null: seam's default).";
      });

      filesystem = {
        read = mkOption {
          type = types.nullOr (types.listOf types.str);
          default = null;
          description = "Allow-list for reads (replaces the default list; null keeps it).";
        };
        write = mkOption {
          type = types.nullOr (types.listOf types.str);
          default = null;
          description = "Allow-list for writes (replaces the default list; null keeps it).";
        };
        protected = mkOption {
          type = types.listOf types.str;
          default = [ ];
          description = "Added to the built-in protected list (never read, at any autonomy level).";
        };
      };

      taint.egress = mkOption {
        type = types.nullOr (types.enum [ "deny" "allow" ]);
        default = null;
        description = "May a tainted turn still reach the network? (null: deny, the default).";
      };
    };
  };

  config = mkIf cfg.enable {
    environment.etc."seam/policy.toml".source = policyFile;

    systemd.services.seam-gate = {
      description = "seam gate";
      wantedBy = [ "multi-user.target" ];
      after = [ "network.target" ];
      environment.SEAM_HOME = seamHome;
      serviceConfig = {
        User = cfg.user;
        ExecStart = "${cfg.package}/bin/seam --policy ${policyFile} gate";
        KillSignal = "SIGTERM";
        TimeoutStopSec = 15;
        Restart = "on-failure";
        UMask = "0077";
        NoNewPrivileges = true;
        CapabilityBoundingSet = "";
        AmbientCapabilities = "";
        ProtectSystem = "strict";
        ProtectHome = "read-only";
        ReadWritePaths = [ seamHome ] ++ cfg.extraWritePaths;
        PrivateTmp = true;
        PrivateDevices = true;
        ProtectKernelTunables = true;
        ProtectKernelModules = true;
        ProtectKernelLogs = true;
        ProtectControlGroups = true;
        ProtectClock = true;
        ProtectHostname = true;
        ProtectProc = "invisible";
        LockPersonality = true;
        RestrictRealtime = true;
        RestrictSUIDSGID = true;
        RestrictAddressFamilies = [ "AF_UNIX" "AF_INET" "AF_INET6" ];
        SystemCallArchitectures = "native";
        SystemCallFilter = [ "~@clock @cpu-emulation @debug @module @obsolete @raw-io @reboot @swap" ];
        SystemCallErrorNumber = "EPERM";
      };
    };
  };
}
