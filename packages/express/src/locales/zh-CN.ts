/**
 * The pages in Simplified Chinese (`zh-CN`; also served for `zh`, `zh-Hans` and `zh-SG`).
 */
import { type Catalogue, strong } from "./Catalogue.js"

const dates = new Intl.DateTimeFormat("zh-CN", { dateStyle: "long", timeZone: "UTC" })
const times = new Intl.DateTimeFormat("zh-CN", { dateStyle: "long", timeStyle: "short", timeZone: "UTC" })

const wait = (seconds: number): string =>
  seconds < 120 ? `${seconds} 秒` : `${Math.ceil(seconds / 60)} 分钟`

/** Simplified Chinese. */
export const zhCN: Catalogue = {
  lang: "zh-CN",
  date: (epochSeconds) => dates.format(new Date(epochSeconds * 1000)),
  dateTime: (epochSeconds) => `${times.format(new Date(epochSeconds * 1000))}（UTC）`,
  frame: {
    securedBy: (productName) => [`由 ${productName} 提供安全保护`]
  },
  signIn: {
    title: "登录",
    lead: (appName) => ["以继续使用 ", strong(appName)],
    username: "用户名",
    password: "密码",
    submit: "登录",
    footer: (redirectHost) => ["登录后你将返回 ", strong(redirectHost), "。"],
    passkey: "使用通行密钥登录",
    passkeyFailed: "通行密钥登录未成功。请重试，或使用密码登录。",
    problems: {
      missing_fields: "请输入用户名和密码。",
      bad_credentials: "用户名或密码不正确。"
    }
  },
  factor: {
    title: "输入验证码",
    lead: (appName) => [
      "打开你的身份验证器应用，输入它显示的验证码",
      ...(appName === undefined ? [] : ["，以继续前往 ", strong(appName)]),
      "。"
    ],
    signedInAs: (username) => ["正在以 ", strong(username), " 登录"],
    code: "验证码",
    hint: "身份验证器应用中的 6 位验证码，或你的一个恢复码。",
    submit: "继续",
    problems: { bad_code: "验证码不正确或已被使用。请输入下一个验证码。" }
  },
  enrol: {
    title: "添加身份验证器应用",
    lead: (appName) => [strong(appName), " 要求登录时进行第二步验证。请添加身份验证器应用。"],
    submit: "启用",
    passkey: "你也可以在账户页面添加通行密钥。",
    accountLink: "前往你的账户",
    doneTitle: "已添加身份验证器应用",
    doneLead: (appName) => [
      "今后登录时，输入密码后还需输入应用中的验证码。请保存好你的恢复码，然后继续前往 ",
      strong(appName),
      "。"
    ],
    continue: "继续"
  },
  consent: {
    title: (appName) => `允许 ${appName} 访问？`,
    heading: (appName, productName) => [strong(appName), ` 请求访问你的 ${productName} 账号`],
    signedInAs: (username) => ["当前登录：", strong(username)],
    notYou: "不是你？",
    willAllow: (appName) => `这将允许 ${appName}：`,
    identityOnly: (productName) => `知道你使用的是哪个 ${productName} 账号`,
    openIdScopes: {
      openid: "使用你的账号登录",
      profile: "查看你的姓名和基本资料",
      email: "查看你的电子邮件地址"
    },
    scopeFallback: (scope) => `访问 ${scope}`,
    allow: "允许",
    deny: "拒绝",
    trust: (appName, productName) => `请确认你信任 ${appName}。${productName} 会记住你对此应用的选择。`,
    manage: "管理你已授权的应用",
    footer: (redirectHost) => ["选择“允许”或“拒绝”后将返回 ", strong(redirectHost), "。"]
  },
  consents: {
    title: "已授权的应用",
    lead: (productName) => `这些应用可以使用你的 ${productName} 账号。不再使用的应用，可以撤销其访问权限。`,
    signedInAs: (username) => ["当前登录：", strong(username)],
    signOut: "退出登录",
    empty: "你尚未授权任何应用。",
    allowedOn: (date) => `授权于 ${date}`,
    scopesOf: (appName) => `${appName} 可以`,
    withdraw: "撤销访问权限",
    withdrawNote: "撤销后该应用会立即失去访问权限，下次使用时必须重新征得你的同意。",
    withdrawn: (appName) => [strong(appName), " 已无法再访问你的账号。"],
    signInTitle: "登录以管理已授权的应用",
    signInLead: (productName) => `登录你的 ${productName} 账号，查看你允许使用该账号的应用。`
  },
  logout: {
    title: "退出登录？",
    lead: (appName, productName) =>
      appName === undefined
        ? [`要在此浏览器中退出 ${productName} 吗？`]
        : [strong(appName), ` 请求在此浏览器中让你退出 ${productName}。`],
    signedInAs: (username) => ["当前登录：", strong(username)],
    confirm: "退出登录",
    signedOutTitle: "你已退出登录",
    signedOutLead: (productName) => `你已不再在此浏览器中登录 ${productName}。现在可以关闭此窗口。`
  },
  account: {
    title: "你的账号",
    lead: (productName) => `管理你登录 ${productName} 的方式，以及你在哪些地方处于登录状态。`,
    notices: {
      password_changed: "密码已修改。你在其他所有地方的登录已退出。",
      session_ended: "该会话已退出登录。",
      others_ended: "你在其他所有地方的登录已退出。",
      passkey_renamed: "通行密钥已重命名。",
      passkey_removed: "通行密钥已移除，不能再用它登录。",
      devices_forgotten: "其他浏览器都已不再受信任。",
      device_forgotten: "该浏览器已不再受信任。",
      authenticator_removed: "身份验证器应用及其恢复码已移除。"
    },
    password: {
      heading: "修改密码",
      current: "当前密码",
      next: "新密码",
      confirm: "确认新密码",
      rules: "至少 8 个字符。",
      submit: "修改密码",
      note: "修改密码后，你在其他所有设备上的登录都会退出，当前设备保持登录。",
      problems: {
        missing_fields: "请填写全部三个密码字段。",
        bad_current: "当前密码不正确。",
        mismatch: "两次输入的新密码不一致。",
        invalid_new: "新密码须为 8 到 1024 个字符，且不含控制字符。"
      }
    },
    sessions: {
      heading: "你的登录位置",
      lead: "你登录过的每个浏览器。如有不认识的，请将其退出登录，然后修改密码。",
      thisDevice: "当前设备",
      signedInOn: (dateTime) => `登录于 ${dateTime}`,
      until: (dateTime) => `若未使用，将于 ${dateTime} 失效`,
      signOut: "退出登录",
      signOutOthers: "退出其他所有地方的登录"
    },
    authenticator: {
      heading: "身份验证器应用",
      lead: "添加身份验证器应用：之后登录时，输入密码后还需输入它显示的验证码。",
      add: "添加身份验证器应用",
      scan: "用你的身份验证器应用扫描此二维码，或手动输入密钥。然后输入应用显示的验证码。",
      qrLabel: "身份验证器应用密钥的二维码",
      secret: "密钥",
      uri: "设置链接",
      code: "应用中的验证码",
      confirm: "启用",
      startOver: "使用新密钥重新开始",
      on: (left) => `身份验证器应用已启用。剩余 ${left} 个恢复码。`,
      proof: "应用中的验证码，或你的密码",
      proofHint: "移除应用或生成新的恢复码时需要。",
      remove: "移除应用",
      newCodes: "生成新的恢复码",
      codesHeading: "你的恢复码",
      codesNote:
        "每个恢复码可代替应用中的验证码登录一次。请妥善保存：它们只显示这一次。之前的恢复码不再有效。",
      problems: {
        bad_code: "验证码不正确。请输入应用当前显示的验证码。",
        bad_proof: "验证码或密码不正确。没有任何更改。"
      }
    },
    applications: {
      heading: "已授权的应用",
      lead: "查看你允许使用你账号的应用，并可撤销其访问权限。",
      link: "管理已授权的应用"
    },
    passkeys: {
      heading: "通行密钥",
      lead: "用指纹、面容或设备 PIN 代替密码登录。",
      empty: "你还没有通行密钥。",
      createdOn: (dateTime) => `添加于 ${dateTime}`,
      lastUsedOn: (dateTime) => `上次使用于 ${dateTime}`,
      neverUsed: "尚未使用",
      synced: "已同步",
      thisDevice: "仅限此设备",
      name: "名称",
      rename: "重命名",
      remove: "移除",
      add: "添加通行密钥",
      addFailed: "未能添加通行密钥，请重试。"
    },
    devices: {
      heading: "受信任的设备",
      lead: "你用密码登录过的浏览器会受信任：他人猜错你的密码不会把它锁定。修改密码会结束所有浏览器的信任。",
      trusted: "此浏览器受信任。",
      notTrusted: "此浏览器不受信任。",
      forget: "不再信任其他所有浏览器",
      label: (browser, system) =>
        browser === null
          ? system === null
            ? "某个浏览器"
            : `${system} 上的某个浏览器`
          : system === null
            ? browser
            : `${system} 上的 ${browser}`,
      trustedSince: (dateTime) => `自 ${dateTime} 起受信任`,
      lastSignIn: (dateTime) => `上次登录：${dateTime}`,
      thisBrowser: "此浏览器",
      forgetOne: "不再信任"
    },
    signInTitle: "登录以管理你的账号",
    signInLead: (productName) => `使用你的 ${productName} 账号登录，以修改密码并查看你的登录位置。`
  },
  console: {
    signInTitle: "登录控制台",
    signInLead: "仅供本服务器的运维人员使用，请使用管理员为你创建的账号。",
    name: "运维账号名",
    password: "密码",
    submit: "登录",
    signInProblems: {
      bad_credentials: () => "运维账号名或密码不正确。",
      throttled: (seconds) => `失败次数过多，请在 ${seconds} 秒后重试。`
    },
    appsTitle: "应用",
    appsLead: "在本服务器注册的应用。",
    signedInAs: (name, role) => ["当前登录：", strong(name), `（${role}）`],
    roles: { admin: "管理员", operator: "运维", viewer: "只读" },
    signOut: "退出登录",
    search: "按名称或 App Key 搜索",
    searchSubmit: "搜索",
    noApps: "没有匹配的应用。",
    appKey: "应用 App Key",
    publicClient: "公开客户端",
    created: (date) => `创建于 ${date}`,
    rotate: "轮换密钥",
    rotateHint: "当前的 App Secret 会立即失效。",
    rotated: (appName) => [strong(appName), " 的新 App Secret 只显示这一次，请立即复制。"],
    newSecret: "新的 App Secret",
    back: "返回应用列表",
    problems: {
      forbidden: {
        title: "不允许",
        explain: "你的角色不允许此操作，或者该表单不是从本控制台提交的。没有任何更改。"
      },
      not_found: { title: "未找到", explain: "没有这个页面或应用。没有任何更改。" },
      bad_request: { title: "请求无效", explain: "无法读取该表单。没有任何更改。" },
      method_not_allowed: { title: "不允许", explain: "该页面不接受此请求方法。" },
      payload_too_large: { title: "内容过大", explain: "表单内容过大。没有任何更改。" },
      unsupported_media_type: { title: "不支持", explain: "表单的格式本控制台无法读取。" },
      unavailable: { title: "暂时不可用", explain: "服务器暂时无法连接数据库，请稍后再试。" }
    }
  },
  error: {
    errorCode: "错误代码",
    received: "该应用要求返回的地址（redirect_uri）：",
    details: "技术详情",
    closeWindow: "请关闭此窗口，返回你原来使用的应用。",
    tryAgain: "重试",
    backToConsents: "返回已授权的应用",
    backToAccount: "返回你的账号",
    problems: {
      unknown_client: {
        title: "无法识别此应用",
        explain: (_, productName) =>
          `引导你来到这里的链接指向一个未在 ${productName} 注册或已被移除的应用。没有任何信息被分享给它。如果问题持续出现，请联系该应用的客服。`
      },
      application_unavailable: {
        title: "此应用暂不可用",
        explain: (_, productName) =>
          `引导你来到这里的应用目前无法通过 ${productName} 登录：它正在等待审核，或已被暂停。没有任何信息被分享给它。`
      },
      bad_redirect_uri: {
        title: "无法使用此登录链接",
        explain: (_, productName) =>
          `该应用要求 ${productName} 把你送回一个未登记的地址，为保护你的账号，我们在此停止。没有任何信息被分享给它。`
      },
      bad_request: {
        title: "此登录链接已损坏",
        explain: (_, productName) =>
          `引导你来到这里的链接不完整或已损坏，${productName} 无法判断该应用的请求内容。没有任何信息被分享。`
      },
      request_too_long: {
        title: "此登录链接过长",
        explain: (p, productName) =>
          `引导你来到这里的链接超过 ${p.limit} 个字符，${productName} 无法接受。没有任何信息被分享。`
      },
      form_expired: {
        title: "此表单已过期",
        explain: () =>
          "该页面打开时间过长、已经提交过，或来自其他网站。为了你的安全，它不能再次使用。没有任何更改。"
      },
      bad_form: {
        title: "无法读取此表单",
        explain: () => "浏览器发送的内容格式不正确。没有任何更改。"
      },
      no_decision: {
        title: "请选择“允许”或“拒绝”",
        explain: () => "表单中没有说明你是否允许该应用。没有任何信息被分享。"
      },
      rate_limited: {
        title: "尝试次数过多",
        explain: (p) => `多次登录失败后，此账号的登录已暂停。请等待 ${wait(p.seconds)} 后重试。`
      },
      unavailable: {
        title: "服务暂时不可用",
        explain: (_, productName) => `${productName} 暂时无法访问其存储。没有任何更改。请稍候再试。`
      },
      server_error: {
        title: "我们这边出了问题",
        explain: (_, productName) =>
          `${productName} 遇到意外问题，未能完成操作。没有任何信息被分享。请稍后再试。`
      },
      not_found: {
        title: "找不到页面",
        explain: () => "此地址没有对应的页面。请检查链接，或返回你原来使用的应用。"
      },
      bad_logout: {
        title: "无法使用此退出链接",
        explain: (_, productName) =>
          `无法核实该应用的退出请求，或它要求返回一个未登记的地址，因此 ${productName} 没有让你退出，也没有把你送往任何地方。请关闭此窗口，从应用中重新退出。`
      },
      method_not_allowed: {
        title: "无法以这种方式打开此页面",
        explain: (_, productName) =>
          `此地址只接受从 ${productName} 自身页面提交的表单，例如在页面被刷新或收藏后再次打开时。请从应用重新开始。`
      },
      passkey_refused: {
        title: "通行密钥未被接受",
        explain: () => "无法为此账号验证该通行密钥。没有任何更改。请重试，或使用密码登录。"
      },
      second_factor_needed: {
        title: "请先设置第二重验证",
        explain: (_, productName) =>
          `该应用需要第二重验证。请先在你的 ${productName} 账号页面设置身份验证器应用（或通行密钥），然后再回来。`
      },
      login_required: {
        title: "请先登录",
        explain: () => "管理通行密钥需要先登录。没有任何更改。"
      }
    }
  }
}
