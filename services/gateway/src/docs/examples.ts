// Real response bodies, captured by packages/system/src/e2e/docs/openapi-truth.e2e.spec.ts with
// UPDATE_OPENAPI_EXAMPLES=1: the examples of the API document (one success per operation).
export const responseExamples: Record<string, unknown> = {
  "addFrodad": {
    "status": 200,
    "message": "friend request sent"
  },
  "adminAccessRequests": {
    "status": 200,
    "number_requests": 3,
    "requests": [
      {
        "group_slug": "club",
        "groupName": "Club",
        "handle": "bob",
        "firstName": "Bob",
        "lastName": "Tester",
        "profPic": "",
        "requestedDate": "2026-03-01",
        "requestedTime": "12:00:00.000000"
      },
      {
        "group_slug": "club",
        "groupName": "Club",
        "handle": "dee",
        "firstName": "Dee",
        "lastName": "Tester",
        "profPic": "",
        "requestedDate": "2026-03-01",
        "requestedTime": "12:00:00.000000"
      },
      {
        "group_slug": "club",
        "groupName": "Club",
        "handle": "eve",
        "firstName": "Eve",
        "lastName": "Tester",
        "profPic": "",
        "requestedDate": "2026-03-01",
        "requestedTime": "12:00:00.000000"
      }
    ]
  },
  "adminAdvanceClock": {
    "status": 200,
    "now": "2026-03-03T12:00:00.000Z"
  },
  "adminCastiesReadModelsDeadLetters": {
    "status": 200,
    "service": "casties",
    "number_dead_letters": 0,
    "dead_letters": []
  },
  "adminCastiesReadModelsRebuild": {
    "status": 200,
    "service": "casties",
    "group": "casties-read",
    "state": "ready",
    "projections": [
      {
        "name": "people",
        "version": 1
      },
      {
        "name": "friendships",
        "version": 2
      },
      {
        "name": "groups",
        "version": 1
      },
      {
        "name": "castie-views",
        "version": 1
      },
      {
        "name": "forecasts",
        "version": 2
      },
      {
        "name": "comments",
        "version": 1
      },
      {
        "name": "castie-search",
        "version": 1
      }
    ],
    "events": 55,
    "seconds": 0.135,
    "message": "the casties read models were rebuilt from 55 events in 0.1 s"
  },
  "adminCastiesReadModelsState": {
    "status": 200,
    "service": "casties",
    "group": "casties-read",
    "state": "ready",
    "projections": [
      {
        "name": "people",
        "version": 1
      },
      {
        "name": "friendships",
        "version": 2
      },
      {
        "name": "groups",
        "version": 1
      },
      {
        "name": "castie-views",
        "version": 1
      },
      {
        "name": "forecasts",
        "version": 2
      },
      {
        "name": "comments",
        "version": 1
      },
      {
        "name": "castie-search",
        "version": 1
      }
    ]
  },
  "adminCreateAccount": {
    "status": 200,
    "email": "eve@example.com",
    "handle": "eve",
    "user_uuid": "f249f347880a432fb8d81aff3b11cc13",
    "message": "the account of eve has been created; they can sign in now"
  },
  "adminCreateGroup": {
    "status": 200,
    "group": {
      "slug": "weather",
      "groupName": "Weather",
      "groupInfoText": "rain or shine",
      "groupIcon": "/media/uploads/4b9a2efd961345ccb3f327f619117c77.png",
      "requiresApproval": false,
      "accessDeniedMessage": "",
      "followersCount": 0,
      "friendsCount": 0,
      "accuracy": null,
      "access": null,
      "following": false,
      "canCreateCastie": false,
      "numberCasties": 0,
      "restrictCreation": false,
      "admins": [],
      "creators": []
    }
  },
  "adminDenyAccess": {
    "status": 200,
    "handle": "eve",
    "group_slug": "club",
    "following": false,
    "access": null,
    "message": "the request of eve to join the Club group has been denied"
  },
  "adminGrantAccess": {
    "status": 200,
    "handle": "ada",
    "group_slug": "club",
    "following": true,
    "access": "granted",
    "message": "ada has been approved to join the Club group"
  },
  "adminGroupsReadModelsDeadLetters": {
    "status": 200,
    "service": "groups",
    "number_dead_letters": 0,
    "dead_letters": []
  },
  "adminGroupsReadModelsRebuild": {
    "status": 200,
    "service": "groups",
    "group": "groups-read",
    "state": "ready",
    "projections": [
      {
        "name": "people",
        "version": 1
      },
      {
        "name": "friendships",
        "version": 2
      },
      {
        "name": "groups",
        "version": 1
      }
    ],
    "events": 55,
    "seconds": 0.019,
    "message": "the groups read models were rebuilt from 55 events in 0.0 s"
  },
  "adminGroupsReadModelsState": {
    "status": 200,
    "service": "groups",
    "group": "groups-read",
    "state": "ready",
    "projections": [
      {
        "name": "people",
        "version": 1
      },
      {
        "name": "friendships",
        "version": 2
      },
      {
        "name": "groups",
        "version": 1
      }
    ]
  },
  "adminListGroups": {
    "status": 200,
    "groups": [
      {
        "slug": "club",
        "groupName": "Club",
        "groupInfoText": "members only",
        "groupIcon": "",
        "requiresApproval": true,
        "accessDeniedMessage": "ask the admins",
        "followersCount": 0,
        "friendsCount": 0,
        "accuracy": null,
        "access": null,
        "following": false,
        "canCreateCastie": false,
        "numberCasties": 0,
        "restrictCreation": true,
        "admins": [
          "ada"
        ],
        "creators": [
          "ada"
        ]
      },
      {
        "slug": "weather",
        "groupName": "Weather",
        "groupInfoText": "rain or shine",
        "groupIcon": "/media/uploads/4b9a2efd961345ccb3f327f619117c77.png",
        "requiresApproval": false,
        "accessDeniedMessage": "",
        "followersCount": 0,
        "friendsCount": 0,
        "accuracy": null,
        "access": null,
        "following": false,
        "canCreateCastie": false,
        "numberCasties": 0,
        "restrictCreation": false,
        "admins": [],
        "creators": []
      }
    ]
  },
  "adminNameAdmin": {
    "status": 200,
    "group": {
      "slug": "club",
      "groupName": "Club",
      "groupInfoText": "members only",
      "groupIcon": "",
      "requiresApproval": true,
      "accessDeniedMessage": "ask the admins",
      "followersCount": 0,
      "friendsCount": 0,
      "accuracy": null,
      "access": null,
      "following": false,
      "canCreateCastie": false,
      "numberCasties": 0,
      "restrictCreation": true,
      "admins": [
        "ada"
      ],
      "creators": []
    }
  },
  "adminNameCreator": {
    "status": 200,
    "group": {
      "slug": "club",
      "groupName": "Club",
      "groupInfoText": "members only",
      "groupIcon": "",
      "requiresApproval": true,
      "accessDeniedMessage": "ask the admins",
      "followersCount": 0,
      "friendsCount": 0,
      "accuracy": null,
      "access": null,
      "following": false,
      "canCreateCastie": false,
      "numberCasties": 0,
      "restrictCreation": true,
      "admins": [
        "ada"
      ],
      "creators": [
        "ada"
      ]
    }
  },
  "adminNotificationsReadModelsDeadLetters": {
    "status": 200,
    "service": "notifications",
    "number_dead_letters": 0,
    "dead_letters": []
  },
  "adminNotificationsReadModelsRebuild": {
    "status": 200,
    "service": "notifications",
    "group": "notifications-read",
    "state": "ready",
    "projections": [
      {
        "name": "people",
        "version": 1
      },
      {
        "name": "friendships",
        "version": 2
      },
      {
        "name": "groups",
        "version": 1
      },
      {
        "name": "notifications",
        "version": 1
      }
    ],
    "events": 58,
    "seconds": 0.068,
    "message": "the notifications read models were rebuilt from 58 events in 0.1 s"
  },
  "adminNotificationsReadModelsState": {
    "status": 200,
    "service": "notifications",
    "group": "notifications-read",
    "state": "ready",
    "projections": [
      {
        "name": "people",
        "version": 1
      },
      {
        "name": "friendships",
        "version": 2
      },
      {
        "name": "groups",
        "version": 1
      },
      {
        "name": "notifications",
        "version": 1
      }
    ]
  },
  "adminShowGroup": {
    "status": 200,
    "group": {
      "slug": "club",
      "groupName": "Club",
      "groupInfoText": "members only",
      "groupIcon": "",
      "requiresApproval": true,
      "accessDeniedMessage": "ask the admins",
      "followersCount": 0,
      "friendsCount": 0,
      "accuracy": null,
      "access": null,
      "following": false,
      "canCreateCastie": false,
      "numberCasties": 0,
      "restrictCreation": true,
      "admins": [
        "ada"
      ],
      "creators": [
        "ada"
      ]
    }
  },
  "adminSocialReadModelsDeadLetters": {
    "status": 200,
    "service": "social",
    "number_dead_letters": 0,
    "dead_letters": []
  },
  "adminSocialReadModelsRebuild": {
    "status": 200,
    "service": "social",
    "group": "social-read",
    "state": "ready",
    "projections": [
      {
        "name": "people",
        "version": 1
      },
      {
        "name": "friendships",
        "version": 2
      }
    ],
    "events": 55,
    "seconds": 0.053,
    "message": "the social read models were rebuilt from 55 events in 0.1 s"
  },
  "adminSocialReadModelsState": {
    "status": 200,
    "service": "social",
    "group": "social-read",
    "state": "ready",
    "projections": [
      {
        "name": "people",
        "version": 1
      },
      {
        "name": "friendships",
        "version": 2
      }
    ]
  },
  "answerCastie": {
    "status": 200,
    "castie": {
      "uuid": "353a844a13704093bf89230e39f8f8ba",
      "question": "Rain in Paris tomorrow?",
      "groupSlug": "weather",
      "showUsername": true,
      "createdAtDate": "2026-03-01",
      "createdAtTime": "12:00:00.000000",
      "lastForecastedDate": "2026-03-01",
      "lastForecastedTime": "12:00:00.000000",
      "allowWriteIn": false,
      "setAnswered": true,
      "openEnded": false,
      "endDate": "2026-03-02",
      "endTime": "08:00",
      "answerSubmitted": true,
      "correctIndex": "Yes",
      "forecastsCount": 1,
      "forecasts": [
        {
          "answer_id": 92616244601882,
          "answer_text": "Yes",
          "percentage": 100,
          "is_correct": true
        },
        {
          "answer_id": 215290805877340,
          "answer_text": "No",
          "percentage": 0
        }
      ],
      "submitter": "ada",
      "is_answerable": false,
      "friendCount": 1,
      "commentsCount": 1,
      "friendForecasts": {
        "22080077404879": {
          "handle": "bob",
          "forecast_text": "Yes",
          "answer_id": 92616244601882,
          "is_correct": true
        }
      }
    }
  },
  "approveGroupRequest": {
    "status": 200,
    "handle": "bob",
    "group_slug": "club",
    "following": true,
    "access": "granted",
    "message": "bob has been approved to join the Club group"
  },
  "createCastie": {
    "status": 200,
    "castie": "created successfully",
    "castie_uuid": "353a844a13704093bf89230e39f8f8ba"
  },
  "createCastieGroups": {
    "status": 200,
    "groups": [
      [
        "Club",
        "club"
      ],
      [
        "Weather",
        "weather"
      ]
    ]
  },
  "createComment": {
    "status": 200,
    "handle": "bob",
    "commentText": "Looks cloudy",
    "comment": "created successfully",
    "commentUUID": "dc4d9bcf1dd4409fb3778bb227d1e0b6",
    "castieUUID": "353a844a13704093bf89230e39f8f8ba"
  },
  "createForecast": {
    "status": 200,
    "message": "forecast successfully recorded",
    "castie_uuid": "353a844a13704093bf89230e39f8f8ba",
    "answer_id": 92616244601882,
    "user_forecast_text": "Yes"
  },
  "deleteAccount": {
    "status": 200,
    "handle_deleted": "dee",
    "message": "Account has been deleted"
  },
  "deleteComment": {
    "status": 200,
    "comment": "deleted"
  },
  "denyGroupRequest": {
    "status": 200,
    "handle": "dee",
    "group_slug": "club",
    "following": false,
    "access": null,
    "message": "the request of dee to join the Club group has been denied"
  },
  "editProfile": {
    "status": 200,
    "message": "data has been successfully updated",
    "updated_fields": [
      "city",
      "state"
    ]
  },
  "followGroup": {
    "status": 200,
    "handle": "ada",
    "group_slug": "weather",
    "following": true,
    "access": null
  },
  "getAnswerForm": {
    "status": 200,
    "uuid": "353a844a13704093bf89230e39f8f8ba",
    "question": "Rain in Paris tomorrow?",
    "group": "weather",
    "allowWriteIn": false,
    "forecastsCount": 0,
    "forecastCount": 0,
    "answer_options": {
      "92616244601882": "Yes",
      "215290805877340": "No"
    }
  },
  "getCastie": {
    "status": 200,
    "castie": {
      "uuid": "353a844a13704093bf89230e39f8f8ba",
      "question": "Rain in Paris tomorrow?",
      "groupSlug": "weather",
      "showUsername": true,
      "createdAtDate": "2026-03-01",
      "createdAtTime": "12:00:00.000000",
      "lastForecastedDate": "2026-03-01",
      "lastForecastedTime": "12:00:00.000000",
      "allowWriteIn": false,
      "setAnswered": true,
      "openEnded": false,
      "endDate": "2026-03-02",
      "endTime": "08:00",
      "answerSubmitted": false,
      "correctIndex": null,
      "forecastsCount": 1,
      "forecasts": [
        {
          "answer_id": 92616244601882,
          "answer_text": "Yes",
          "percentage": 100
        },
        {
          "answer_id": 215290805877340,
          "answer_text": "No",
          "percentage": 0
        }
      ],
      "submitter": "ada",
      "is_answerable": false,
      "friendCount": 1,
      "commentsCount": 1,
      "friendForecasts": {
        "22080077404879": {
          "handle": "bob",
          "forecast_text": "Yes",
          "answer_id": 92616244601882
        }
      }
    }
  },
  "getEmail": {
    "status": 200,
    "email": "dee@example.com"
  },
  "getGroup": {
    "status": 200,
    "slug": "weather",
    "groupName": "Weather",
    "groupInfoText": "rain or shine",
    "groupIcon": "/media/uploads/4b9a2efd961345ccb3f327f619117c77.png",
    "requiresApproval": false,
    "accessDeniedMessage": "",
    "followersCount": 3,
    "friendsCount": 1,
    "accuracy": null,
    "access": null,
    "following": true,
    "canCreateCastie": true,
    "numberCasties": 1,
    "ranking": 0,
    "totalRanked": 0,
    "casties": {
      "353a844a13704093bf89230e39f8f8ba": {
        "uuid": "353a844a13704093bf89230e39f8f8ba",
        "question": "Rain in Paris tomorrow?",
        "groupSlug": "weather",
        "showUsername": true,
        "createdAtDate": "2026-03-01",
        "createdAtTime": "12:00:00.000000",
        "lastForecastedDate": "2026-03-01",
        "lastForecastedTime": "12:00:00.000000",
        "allowWriteIn": false,
        "setAnswered": true,
        "openEnded": false,
        "endDate": "2026-03-02",
        "endTime": "08:00",
        "answerSubmitted": false,
        "correctIndex": null,
        "forecastsCount": 1,
        "forecasts": [
          {
            "answer_id": 92616244601882,
            "answer_text": "Yes",
            "percentage": 100
          },
          {
            "answer_id": 215290805877340,
            "answer_text": "No",
            "percentage": 0
          }
        ],
        "submitter": "ada",
        "userForecast": {
          "forecast_text": "Yes",
          "forecast_id": 22080077404879,
          "is_correct": false,
          "answer_id": 92616244601882
        },
        "is_answerable": false,
        "friendCount": 0,
        "commentsCount": 1,
        "friendPics": []
      }
    }
  },
  "getPassword": {
    "status": 200,
    "password": "********"
  },
  "getPreferences": {
    "status": 200,
    "is_private": false
  },
  "getProfileEdit": {
    "status": 200,
    "handle": "dee",
    "firstName": "Dee",
    "lastName": "Tester",
    "city": "",
    "state": "",
    "profPic": "",
    "backgroundPic": ""
  },
  "groupAccuracy": {
    "status": 200,
    "accuracy": {
      "percentCorrect": 0,
      "ranking": 0,
      "totalRanked": 0,
      "ranking_outOf": 0,
      "myForecasts": {
        "22080077404879": {
          "question": "Rain in Paris tomorrow?",
          "uuid": "353a844a13704093bf89230e39f8f8ba",
          "forecast": "Yes",
          "is_active": true,
          "endDate": "2026-03-02",
          "endTime": "08:00",
          "points_earned": 0
        }
      }
    }
  },
  "groupLeaderboard": {
    "status": 200,
    "leaderboard_groups": [
      {
        "slug": "club",
        "groupName": "Club"
      },
      {
        "slug": "weather",
        "groupName": "Weather"
      }
    ],
    "leaderboard_profiles": [
      {
        "handle": "bob",
        "lastName": "Tester",
        "firstName": "Bob",
        "profPic": "",
        "city": "",
        "state": "",
        "xp": 10
      },
      {
        "handle": "ada",
        "lastName": "Tester",
        "firstName": "Ada",
        "profPic": "/media/uploads/b44521d7003b4658ae064b4cad077a95.png",
        "city": "",
        "state": "",
        "xp": 0
      },
      {
        "handle": "dee",
        "lastName": "Tester",
        "firstName": "Dee",
        "profPic": "",
        "city": "",
        "state": "",
        "xp": 0
      }
    ]
  },
  "hamburgerMenu": {
    "status": 200,
    "handle": "bob",
    "groups": [
      [
        "Club",
        "club"
      ],
      [
        "Weather",
        "weather"
      ]
    ]
  },
  "healthz": {
    "status": "ok"
  },
  "home": {
    "status": 200,
    "profile_handle": "bob",
    "casties": {
      "ad737e9ad6994c068f36b71d75c1f303": {
        "uuid": "ad737e9ad6994c068f36b71d75c1f303",
        "question": "Who wins the cup?",
        "groupSlug": "club",
        "showUsername": false,
        "createdAtDate": "2026-03-01",
        "createdAtTime": "12:00:00.000000",
        "lastForecastedDate": "2026-03-01",
        "lastForecastedTime": "12:00:00.000000",
        "allowWriteIn": true,
        "setAnswered": false,
        "openEnded": true,
        "endDate": null,
        "endTime": null,
        "answerSubmitted": false,
        "correctIndex": null,
        "forecastsCount": 1,
        "forecasts": [
          {
            "answer_text": "The Lions",
            "percentage": 100
          }
        ],
        "submitter": "",
        "userForecast": {
          "forecast_text": "The Lions",
          "forecast_id": 150191525092673,
          "is_correct": false
        },
        "is_answerable": true,
        "friendCount": 0,
        "commentsCount": 0,
        "friendPics": []
      },
      "353a844a13704093bf89230e39f8f8ba": {
        "uuid": "353a844a13704093bf89230e39f8f8ba",
        "question": "Rain in Paris tomorrow?",
        "groupSlug": "weather",
        "showUsername": true,
        "createdAtDate": "2026-03-01",
        "createdAtTime": "12:00:00.000000",
        "lastForecastedDate": "2026-03-01",
        "lastForecastedTime": "12:00:00.000000",
        "allowWriteIn": false,
        "setAnswered": true,
        "openEnded": false,
        "endDate": "2026-03-02",
        "endTime": "08:00",
        "answerSubmitted": false,
        "correctIndex": null,
        "forecastsCount": 1,
        "forecasts": [
          {
            "answer_id": 92616244601882,
            "answer_text": "Yes",
            "percentage": 100
          },
          {
            "answer_id": 215290805877340,
            "answer_text": "No",
            "percentage": 0
          }
        ],
        "submitter": "ada",
        "userForecast": {
          "forecast_text": "Yes",
          "forecast_id": 22080077404879,
          "is_correct": false,
          "answer_id": 92616244601882
        },
        "is_answerable": false,
        "friendCount": 0,
        "commentsCount": 1,
        "friendPics": []
      }
    },
    "has_more": false,
    "next_before": null
  },
  "homeTab": {
    "status": 200,
    "profile_handle": "bob",
    "casties": {
      "ad737e9ad6994c068f36b71d75c1f303": {
        "uuid": "ad737e9ad6994c068f36b71d75c1f303",
        "question": "Who wins the cup?",
        "groupSlug": "club",
        "showUsername": false,
        "createdAtDate": "2026-03-01",
        "createdAtTime": "12:00:00.000000",
        "lastForecastedDate": "2026-03-01",
        "lastForecastedTime": "12:00:00.000000",
        "allowWriteIn": true,
        "setAnswered": false,
        "openEnded": true,
        "endDate": null,
        "endTime": null,
        "answerSubmitted": false,
        "correctIndex": null,
        "forecastsCount": 1,
        "forecasts": [
          {
            "answer_text": "The Lions",
            "percentage": 100
          }
        ],
        "submitter": "",
        "userForecast": {
          "forecast_text": "The Lions",
          "forecast_id": 150191525092673,
          "is_correct": false
        },
        "is_answerable": true,
        "friendCount": 0,
        "commentsCount": 0,
        "friendPics": []
      },
      "353a844a13704093bf89230e39f8f8ba": {
        "uuid": "353a844a13704093bf89230e39f8f8ba",
        "question": "Rain in Paris tomorrow?",
        "groupSlug": "weather",
        "showUsername": true,
        "createdAtDate": "2026-03-01",
        "createdAtTime": "12:00:00.000000",
        "lastForecastedDate": "2026-03-01",
        "lastForecastedTime": "12:00:00.000000",
        "allowWriteIn": false,
        "setAnswered": true,
        "openEnded": false,
        "endDate": "2026-03-02",
        "endTime": "08:00",
        "answerSubmitted": false,
        "correctIndex": null,
        "forecastsCount": 1,
        "forecasts": [
          {
            "answer_id": 92616244601882,
            "answer_text": "Yes",
            "percentage": 100
          },
          {
            "answer_id": 215290805877340,
            "answer_text": "No",
            "percentage": 0
          }
        ],
        "submitter": "ada",
        "userForecast": {
          "forecast_text": "Yes",
          "forecast_id": 22080077404879,
          "is_correct": false,
          "answer_id": 92616244601882
        },
        "is_answerable": false,
        "friendCount": 0,
        "commentsCount": 1,
        "friendPics": []
      }
    },
    "has_more": false,
    "next_before": null
  },
  "initialize": {
    "status": 200,
    "number_notifications": 6,
    "needs_answer": false,
    "number_needing_answer": 0
  },
  "leaderboard": {
    "status": 200,
    "leaderboard_groups": [
      {
        "slug": "club",
        "groupName": "Club"
      },
      {
        "slug": "weather",
        "groupName": "Weather"
      }
    ],
    "leaderboard_profiles": [
      {
        "handle": "bob",
        "lastName": "Tester",
        "firstName": "Bob",
        "profPic": "",
        "city": "",
        "state": "",
        "level": 1
      },
      {
        "handle": "ada",
        "lastName": "Tester",
        "firstName": "Ada",
        "profPic": "/media/uploads/b44521d7003b4658ae064b4cad077a95.png",
        "city": "",
        "state": "",
        "level": 1
      },
      {
        "handle": "dee",
        "lastName": "Tester",
        "firstName": "Dee",
        "profPic": "",
        "city": "",
        "state": "",
        "level": 1
      },
      {
        "handle": "eve",
        "lastName": "Tester",
        "firstName": "Eve",
        "profPic": "",
        "city": "",
        "state": "",
        "level": 1
      }
    ]
  },
  "listComments": {
    "status": 200,
    "numberComments": 0,
    "uuid": "353a844a13704093bf89230e39f8f8ba",
    "comments": []
  },
  "listFollowers": {
    "status": 200,
    "followers": {
      "ada": {
        "handle": "ada",
        "lastName": "Tester",
        "firstName": "Ada",
        "profPic": "/media/uploads/b44521d7003b4658ae064b4cad077a95.png",
        "friend_status": "friends"
      },
      "bob": {
        "handle": "bob",
        "lastName": "Tester",
        "firstName": "Bob",
        "profPic": "",
        "friend_status": "self"
      },
      "dee": {
        "handle": "dee",
        "lastName": "Tester",
        "firstName": "Dee",
        "profPic": "",
        "friend_status": "not-friends"
      }
    }
  },
  "listFriendFollowers": {
    "status": 200,
    "friendFollowers": {
      "ada": {
        "handle": "ada",
        "lastName": "Tester",
        "firstName": "Ada",
        "profPic": "/media/uploads/b44521d7003b4658ae064b4cad077a95.png",
        "friend_status": "friends"
      }
    }
  },
  "listFrodadRequests": {
    "status": 200,
    "number_received": 1,
    "requests_received": [
      {
        "handle": "ada",
        "firstName": "Ada",
        "lastName": "Tester"
      }
    ],
    "number_sent": 0,
    "requests_sent": null
  },
  "listGroupRequests": {
    "status": 200,
    "group_slug": "club",
    "number_requests": 3,
    "requests": [
      {
        "handle": "bob",
        "firstName": "Bob",
        "lastName": "Tester",
        "profPic": "",
        "requestedDate": "2026-03-01",
        "requestedTime": "12:00:00.000000"
      },
      {
        "handle": "dee",
        "firstName": "Dee",
        "lastName": "Tester",
        "profPic": "",
        "requestedDate": "2026-03-01",
        "requestedTime": "12:00:00.000000"
      },
      {
        "handle": "eve",
        "firstName": "Eve",
        "lastName": "Tester",
        "profPic": "",
        "requestedDate": "2026-03-01",
        "requestedTime": "12:00:00.000000"
      }
    ]
  },
  "listGroups": {
    "status": 200,
    "groups": {
      "club": {
        "slug": "club",
        "groupName": "Club",
        "groupInfoText": "members only",
        "groupIcon": "",
        "requiresApproval": true,
        "accessDeniedMessage": "ask the admins",
        "followersCount": 3,
        "friendsCount": 1,
        "accuracy": null,
        "access": "granted",
        "following": true,
        "canCreateCastie": false,
        "numberCasties": 1
      },
      "weather": {
        "slug": "weather",
        "groupName": "Weather",
        "groupInfoText": "rain or shine",
        "groupIcon": "/media/uploads/4b9a2efd961345ccb3f327f619117c77.png",
        "requiresApproval": false,
        "accessDeniedMessage": "",
        "followersCount": 3,
        "friendsCount": 1,
        "accuracy": null,
        "access": null,
        "following": true,
        "canCreateCastie": true,
        "numberCasties": 1
      }
    }
  },
  "listNotifications": {
    "status": 200,
    "castie-answered": [
      {
        "id": "answered:353a844a13704093bf89230e39f8f8ba:9fec604bd3434e8ca6d182965a680c93",
        "created_on_date": "2026-03-03",
        "created_on_time": "12:00:00",
        "timesince_created": "just now",
        "message": "The answer to \"Rain in Paris tomorrow?\" is in- see how you did!",
        "notification_type": "castie-answered",
        "data": "353a844a13704093bf89230e39f8f8ba"
      },
      {
        "id": "answered:ad737e9ad6994c068f36b71d75c1f303:9fec604bd3434e8ca6d182965a680c93",
        "created_on_date": "2026-03-03",
        "created_on_time": "12:00:00",
        "timesince_created": "just now",
        "message": "The answer to \"Who wins the cup?\" is in- see how you did!",
        "notification_type": "castie-answered",
        "data": "ad737e9ad6994c068f36b71d75c1f303"
      }
    ],
    "friend-request-accepted": [
      {
        "id": "accepted:9fec604bd3434e8ca6d182965a680c93:16a7c054eda840e4a2318fc4e9566841",
        "created_on_date": "2026-03-01",
        "created_on_time": "12:00:00",
        "timesince_created": "2 days ago",
        "message": "@dee has accepted your friendship request",
        "notification_type": "friend-request-accepted",
        "data": "dee"
      }
    ]
  },
  "login": {
    "status": 200,
    "profile_handle": "bob",
    "number_notifications": 2,
    "needs_answer": false,
    "number_needing_answer": 0
  },
  "needsAnswer": {
    "status": 200,
    "needs_answer": true,
    "number_needing_answer": 1
  },
  "profileCasties": {
    "status": 200,
    "profileInfo": {
      "handle": "ada",
      "user_uuid": "704aff69158849e7824c20f16e23d636",
      "firstName": "Ada",
      "lastName": "Tester",
      "city": "",
      "state": "",
      "profPic": "/media/uploads/b44521d7003b4658ae064b4cad077a95.png",
      "image_last_updated_date": "2026-03-01",
      "image_last_updated_time": "12:00:00.000000",
      "level": 1,
      "adjective": "rookie",
      "noun": "benchwarmer",
      "is_private": false,
      "percentCorrect": 0,
      "myCastiesNumber": 2,
      "groupsNumber": 2,
      "frodadsNumber": 1,
      "forecastsNumber": 0,
      "friend_status": "friend"
    },
    "myCasties": {
      "353a844a13704093bf89230e39f8f8ba": {
        "question": "Rain in Paris tomorrow?",
        "answerable": false
      }
    }
  },
  "profileFrodads": {
    "status": 200,
    "profileInfo": {
      "handle": "ada",
      "user_uuid": "704aff69158849e7824c20f16e23d636",
      "firstName": "Ada",
      "lastName": "Tester",
      "city": "",
      "state": "",
      "profPic": "/media/uploads/b44521d7003b4658ae064b4cad077a95.png",
      "image_last_updated_date": "2026-03-01",
      "image_last_updated_time": "12:00:00.000000",
      "level": 1,
      "adjective": "rookie",
      "noun": "benchwarmer",
      "is_private": false,
      "percentCorrect": 0,
      "myCastiesNumber": 0,
      "groupsNumber": 2,
      "frodadsNumber": 1,
      "forecastsNumber": 0,
      "friend_status": "friend"
    },
    "myFrodads": {
      "bob": {
        "handle": "bob",
        "lastName": "Tester",
        "firstName": "Bob",
        "profPic": "",
        "friend_status": "self",
        "level": 1
      }
    }
  },
  "profileGroups": {
    "status": 200,
    "profileInfo": {
      "handle": "bob",
      "user_uuid": "9fec604bd3434e8ca6d182965a680c93",
      "firstName": "Bob",
      "lastName": "Tester",
      "city": "",
      "state": "",
      "profPic": "",
      "image_last_updated_date": null,
      "image_last_updated_time": null,
      "level": 1,
      "adjective": "rookie",
      "noun": "benchwarmer",
      "is_private": false,
      "percentCorrect": 0,
      "myCastiesNumber": 0,
      "groupsNumber": 2,
      "frodadsNumber": 1,
      "forecastsNumber": 2,
      "friend_status": "friend"
    },
    "myGroups": {
      "club": {
        "slug": "club",
        "groupName": "Club",
        "groupInfoText": "members only",
        "groupIcon": "",
        "requiresApproval": true,
        "accessDeniedMessage": "ask the admins",
        "followersCount": 3,
        "friendsCount": 1,
        "accuracy": null,
        "access": "granted",
        "following": true,
        "canCreateCastie": true,
        "numberCasties": 1
      },
      "weather": {
        "slug": "weather",
        "groupName": "Weather",
        "groupInfoText": "rain or shine",
        "groupIcon": "/media/uploads/4b9a2efd961345ccb3f327f619117c77.png",
        "requiresApproval": false,
        "accessDeniedMessage": "",
        "followersCount": 3,
        "friendsCount": 1,
        "accuracy": null,
        "access": null,
        "following": true,
        "canCreateCastie": true,
        "numberCasties": 1
      }
    }
  },
  "profileStats": {
    "status": 200,
    "profileInfo": {
      "handle": "bob",
      "user_uuid": "9fec604bd3434e8ca6d182965a680c93",
      "firstName": "Bob",
      "lastName": "Tester",
      "city": "",
      "state": "",
      "profPic": "",
      "image_last_updated_date": null,
      "image_last_updated_time": null,
      "level": 1,
      "adjective": "rookie",
      "noun": "benchwarmer",
      "is_private": false,
      "percentCorrect": 0,
      "myCastiesNumber": 0,
      "groupsNumber": 2,
      "frodadsNumber": 1,
      "forecastsNumber": 2,
      "friend_status": "friend"
    },
    "myForecasts": {
      "22080077404879": {
        "question": "Rain in Paris tomorrow?",
        "uuid": "353a844a13704093bf89230e39f8f8ba",
        "forecast": "Yes",
        "is_active": true,
        "endDate": "2026-03-02",
        "endTime": "08:00",
        "points_earned": 0
      },
      "150191525092673": {
        "question": "Who wins the cup?",
        "uuid": "ad737e9ad6994c068f36b71d75c1f303",
        "forecast": "The Lions",
        "is_active": true,
        "endDate": null,
        "endTime": null,
        "points_earned": 0
      }
    }
  },
  "readyz": {
    "status": "ready",
    "maxLagEvents": 1000,
    "readModels": [
      {
        "service": "groups",
        "group": "groups-read",
        "projection": "people",
        "lagEvents": 0
      },
      {
        "service": "groups",
        "group": "groups-read",
        "projection": "friendships",
        "lagEvents": 0
      },
      {
        "service": "groups",
        "group": "groups-read",
        "projection": "groups",
        "lagEvents": 0
      },
      {
        "service": "casties",
        "group": "casties-read",
        "projection": "people",
        "lagEvents": 0
      },
      {
        "service": "casties",
        "group": "casties-read",
        "projection": "friendships",
        "lagEvents": 0
      },
      {
        "service": "casties",
        "group": "casties-read",
        "projection": "groups",
        "lagEvents": 0
      },
      {
        "service": "casties",
        "group": "casties-read",
        "projection": "castie-views",
        "lagEvents": 0
      },
      {
        "service": "casties",
        "group": "casties-read",
        "projection": "forecasts",
        "lagEvents": 0
      },
      {
        "service": "casties",
        "group": "casties-read",
        "projection": "comments",
        "lagEvents": 0
      },
      {
        "service": "casties",
        "group": "casties-read",
        "projection": "castie-search",
        "lagEvents": 0
      },
      {
        "service": "social",
        "group": "social-read",
        "projection": "people",
        "lagEvents": 0
      },
      {
        "service": "social",
        "group": "social-read",
        "projection": "friendships",
        "lagEvents": 0
      },
      {
        "service": "notifications",
        "group": "notifications-read",
        "projection": "people",
        "lagEvents": 0
      },
      {
        "service": "notifications",
        "group": "notifications-read",
        "projection": "friendships",
        "lagEvents": 0
      },
      {
        "service": "notifications",
        "group": "notifications-read",
        "projection": "groups",
        "lagEvents": 0
      },
      {
        "service": "notifications",
        "group": "notifications-read",
        "projection": "notifications",
        "lagEvents": 0
      }
    ],
    "checks": [
      {
        "name": "cache",
        "ok": true
      }
    ]
  },
  "reportCastie": {
    "status": 200,
    "message": "castie has been reported"
  },
  "reportComment": {
    "status": 200,
    "message": "comment has been reported"
  },
  "respondToFrodadRequest": {
    "status": 200,
    "message": "you and ada are now frodads"
  },
  "searchCasties": {
    "status": 200,
    "search_results": {
      "353a844a13704093bf89230e39f8f8ba": {
        "uuid": "353a844a13704093bf89230e39f8f8ba",
        "question": "Rain in Paris tomorrow?",
        "groupSlug": "weather",
        "showUsername": true,
        "createdAtDate": "2026-03-01",
        "createdAtTime": "12:00:00.000000",
        "lastForecastedDate": "2026-03-01",
        "lastForecastedTime": "12:00:00.000000",
        "allowWriteIn": false,
        "setAnswered": true,
        "openEnded": false,
        "endDate": "2026-03-02",
        "endTime": "08:00",
        "answerSubmitted": false,
        "correctIndex": null,
        "forecastsCount": 1,
        "forecasts": [
          {
            "answer_id": 92616244601882,
            "answer_text": "Yes",
            "percentage": 100
          },
          {
            "answer_id": 215290805877340,
            "answer_text": "No",
            "percentage": 0
          }
        ],
        "submitter": "ada",
        "userForecast": {
          "forecast_text": "Yes",
          "forecast_id": 22080077404879,
          "is_correct": false,
          "answer_id": 92616244601882
        },
        "is_answerable": false,
        "friendCount": 0,
        "commentsCount": 1,
        "friendPics": [],
        "forecast_options": [
          {
            "answer_id": 92616244601882,
            "answer_text": "Yes",
            "percentage": 100
          },
          {
            "answer_id": 215290805877340,
            "answer_text": "No",
            "percentage": 0
          }
        ]
      }
    },
    "has_more": false,
    "next_before": null
  },
  "searchGroups": {
    "status": 200,
    "search_results": {
      "club": {
        "slug": "club",
        "groupName": "Club",
        "groupInfoText": "members only",
        "groupIcon": "",
        "requiresApproval": true,
        "accessDeniedMessage": "ask the admins",
        "followersCount": 3,
        "friendsCount": 1,
        "accuracy": null,
        "access": "granted",
        "following": true,
        "canCreateCastie": false,
        "numberCasties": 1
      },
      "weather": {
        "slug": "weather",
        "groupName": "Weather",
        "groupInfoText": "rain or shine",
        "groupIcon": "/media/uploads/4b9a2efd961345ccb3f327f619117c77.png",
        "requiresApproval": false,
        "accessDeniedMessage": "",
        "followersCount": 3,
        "friendsCount": 1,
        "accuracy": null,
        "access": null,
        "following": true,
        "canCreateCastie": true,
        "numberCasties": 1
      }
    },
    "has_more": false,
    "next_before": null
  },
  "searchPeople": {
    "status": 200,
    "search_results": [
      {
        "first_name": "Ada",
        "last_name": "Tester",
        "friend_status": "self",
        "handle": "ada"
      },
      {
        "first_name": "Bob",
        "last_name": "Tester",
        "friend_status": "friends",
        "handle": "bob"
      },
      {
        "first_name": "Dee",
        "last_name": "Tester",
        "friend_status": "not-friends",
        "handle": "dee"
      },
      {
        "first_name": "Eve",
        "last_name": "Tester",
        "friend_status": "not-friends",
        "handle": "eve"
      }
    ],
    "has_more": false,
    "next_before": null
  },
  "setEmail": {
    "status": 200,
    "message": "email has been successfully updated",
    "new_email": "dee2@example.com",
    "new_username": "dee2@example.com"
  },
  "setPassword": {
    "status": 200,
    "message": "password has been successfully updated"
  },
  "setPreferences": {
    "status": 200,
    "message": "data has been successfully updated",
    "is_private": true
  },
  "signupEmail": {
    "status": 200,
    "email": "ada@example.com",
    "message": "email is unique- proceed to the password screen"
  },
  "signupHandle": {
    "status": 200,
    "handle": "ada",
    "message": "proceed to the picture screen"
  },
  "signupIncomplete": {
    "status": 200,
    "message": "user data has been deleted"
  },
  "signupPassword": {
    "status": 200,
    "email": "ada@example.com",
    "username": "ada@example.com",
    "message": "User has been created. proceed to the name screen."
  },
  "signupPicture": {
    "status": 200,
    "email": "ada@example.com",
    "handle": "ada",
    "message": "Sign up complete- now show me the home page"
  },
  "unfollowGroup": {
    "status": 200,
    "handle": "eve",
    "group_slug": "club",
    "following": false,
    "access": null
  },
  "unfrodad": {
    "status": 200,
    "message": "dee has been unfriended"
  }
};
